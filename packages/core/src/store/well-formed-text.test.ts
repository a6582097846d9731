import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'
import { wellFormedText, wellFormedValue } from './well-formed-text.js'

const HIGH = '\uD83D' // the first half of 😀, as a truncated LLM reply ends
const LOW = '\uDE00'

describe('well-formed text', () => {
  it('replaces lone surrogates, high or low, with U+FFFD and keeps pairs; clean text is the same string', () => {
    expect(wellFormedText(`cut ${HIGH}`)).toBe('cut \uFFFD')
    expect(wellFormedText(`${LOW}x${HIGH}${HIGH}`)).toBe('\uFFFDx\uFFFD\uFFFD')
    expect(wellFormedText('emoji 😀 and 𝄞')).toBe('emoji 😀 and 𝄞')
    // what a UTF-8 encoder (Yjs, every receiver) makes of it
    expect(wellFormedText(`a${HIGH}b`)).toBe(new TextDecoder().decode(new TextEncoder().encode(`a${HIGH}b`)))
  })

  it('walks values (object keys too) and copies only what changes, never the value given', () => {
    const clean = { a: ['x', { b: 1 }], c: null }
    expect(wellFormedValue(clean)).toBe(clean)
    const given = { [`k${HIGH}`]: [`v${LOW}`, 2, { ok: 'yes' }], same: { deep: 'clean' } }
    const out = wellFormedValue(given)
    expect(out).toEqual({ 'k\uFFFD': ['v\uFFFD', 2, { ok: 'yes' }], same: { deep: 'clean' } })
    expect(out.same).toBe(given.same)
    expect(Object.keys(given)).toEqual([`k${HIGH}`, 'same']) // untouched
    const bytes = new Uint8Array([1, 2])
    expect(wellFormedValue({ bytes }).bytes).toBe(bytes)
  })
})

describe('synced text is stored well-formed', () => {
  it('every synced kind stores a lone surrogate in its text as U+FFFD, and what the call returns is what it stored', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    await memory.projects.setSync('p', { messages: true })
    const value = { note: `half an emoji ${HIGH}`, [`key ${LOW}`]: [`item ${HIGH}`] }
    const stored = { note: 'half an emoji \uFFFD', 'key \uFFFD': ['item \uFFFD'] }
    expect((await memory.facts.set('p', 'k', value)).value).toEqual(stored)
    expect((await memory.facts.get('p', 'k'))?.value).toEqual(stored)
    expect(value.note).toBe(`half an emoji ${HIGH}`) // the caller's object is not changed
    expect((await memory.facts.history('p', 'k')).map((v) => v.value)).toEqual([stored])

    await memory.blocks.set('p', 'persona', `likes ${HIGH}`, { description: `about ${LOW}` })
    expect(await memory.blocks.get('p', 'persona')).toMatchObject({ value: 'likes \uFFFD', description: 'about \uFFFD' })

    const summary = await memory.summaries.create('p', { kind: 'project', text: `summary ${HIGH}` })
    expect((await memory.summaries.latest('p'))?.text).toBe('summary \uFFFD')
    expect(summary.text).toBe('summary \uFFFD')

    const pattern = await memory.patterns.observe('p', `walks at noon ${HIGH}`)
    expect(pattern.text).toBe('walks at noon \uFFFD')
    expect((await memory.patterns.list('p')).map((x) => x.text)).toEqual(['walks at noon \uFFFD'])

    const session = await memory.sessions.create('p', { title: `chat ${LOW}` })
    expect((await memory.sessions.get(session.id))?.title).toBe('chat \uFFFD')
    const message = await memory.messages.append(session.id, { role: 'assistant', content: `truncated reply ${HIGH}`, meta: { [`m${LOW}`]: `x${HIGH}` } })
    expect(message).toMatchObject({ content: 'truncated reply \uFFFD', meta: { 'm\uFFFD': 'x\uFFFD' } })
    expect((await memory.messages.tail(session.id, 1))[0]).toMatchObject({ content: 'truncated reply \uFFFD', meta: { 'm\uFFFD': 'x\uFFFD' } })
    await memory.messages.edit(message.id, { content: `edited ${LOW}` })
    expect((await memory.messages.tail(session.id, 1))[0]!.content).toBe('edited \uFFFD')

    await memory.artifacts.put('p', { name: `report ${HIGH}.txt`, mimeType: 'text/plain', data: 'x', meta: { title: `t ${LOW}` } })
    expect((await memory.artifacts.list('p')).items.map((x) => [x.name, x.meta])).toEqual([['report \uFFFD.txt', { title: 't \uFFFD' }]])
    await memory.close()
  })
})
