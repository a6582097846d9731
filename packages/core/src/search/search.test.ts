import { describe, expect, it } from 'vitest'
import { MemoryError } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
  } catch (e) {
    return e instanceof MemoryError ? e.code : 'not a MemoryError'
  }
  return undefined
}

describe('search over archive passages', () => {
  it('ranks by BM25 with stemming, case and diacritics folded', async () => {
    const memory = await openTestMemory()
    const p = await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.archive.create(p.id, 'The café serves crème brûlée on Sundays')
    await memory.archive.create(p.id, 'Running the deployment scripts takes ten minutes')
    await memory.archive.create(p.id, 'Bananas are yellow')
    const hits = await memory.search('p1', 'CAFE creme')
    expect(hits.map((h) => h.text)).toEqual(['The café serves crème brûlée on Sundays'])
    expect(hits[0]).toMatchObject({ kind: 'passage', projectId: 'p1' })
    expect((await memory.search('p1', 'how do I run a deploy script?'))[0]?.text).toMatch(/^Running/)
    await memory.close()
  })

  it('removes postings on delete and leaves none behind a rolled-back write', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    const a = await memory.archive.create('p1', 'zebra stripes everywhere')
    expect(await memory.search('p1', 'zebra')).toHaveLength(1)
    expect(await memory.archive.delete(a.id)).toBe(true)
    expect(await memory.archive.delete(a.id)).toBe(false)
    expect(await memory.search('p1', 'zebra')).toEqual([])
    expect(await codeOf(memory.archive.create('nope', 'zebra again'))).toBe('not_found')
    expect(await memory.search('p1', 'zebra')).toEqual([])
    await memory.close()
  })

  it('keeps the index across reopen without rebuilding', async () => {
    const clock = testClock()
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ name: 'P', id: 'p1' })
    await first.archive.create('p1', 'persistent walrus memory')
    await first.close()
    const again = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, now: clock.now })
    expect((await again.search('p1', 'walrus')).map((h) => h.text)).toEqual(['persistent walrus memory'])
    await again.close()
  })

  it('validates input and hides archived projects', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.archive.create('p1', 'secret otter')
    expect(await codeOf(memory.search('p1', 'x', { mode: 'vector' }))).toBe('invalid_input')
    expect(await codeOf(memory.search('p1', 'x', { limit: 0 }))).toBe('invalid_input')
    expect(await codeOf(memory.search('p1', 'x', { kinds: ['nope' as 'fact'] }))).toBe('invalid_input')
    expect(await codeOf(memory.search('', 'x'))).toBe('invalid_input')
    expect(await memory.search('p1', 'otter')).toHaveLength(1)
    await memory.projects.archive('p1')
    expect(await memory.search('p1', 'otter')).toEqual([])
    await memory.close()
  })
})

describe('search over every kind', () => {
  it('finds messages, facts, summaries with kind and session filters', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ name: 'P', id: 'p1' })
    const s1 = await memory.sessions.create('p1')
    const s2 = await memory.sessions.create('p1')
    await memory.messages.appendExchange(s1.id, 'My favourite colour is teal', 'Noted, teal it is')
    clock.advance(1000)
    await memory.messages.appendExchange(s2.id, 'Paint the fence teal please', 'Okay')
    await memory.facts.set('p1', 'favourite.colour', 'teal')
    await memory.summaries.create('p1', { sessionId: s1.id, kind: 'session', text: 'User likes teal' })
    const all = await memory.search('p1', 'teal')
    expect(new Set(all.map((h) => h.kind))).toEqual(new Set(['message', 'fact', 'summary']))
    expect(all.find((h) => h.kind === 'fact')?.text).toContain('teal')
    expect((await memory.search('p1', 'teal', { kinds: ['fact'] })).map((h) => h.kind)).toEqual(['fact'])
    const inS2 = await memory.search('p1', 'teal', { sessionId: s2.id })
    expect(inS2.length).toBeGreaterThan(0)
    expect(inS2.every((h) => h.sessionId === s2.id)).toBe(true)
    const notS1 = await memory.search('p1', 'teal', { excludeSessionId: s1.id })
    expect(notS1.some((h) => h.sessionId === s1.id)).toBe(false)
    expect(await memory.search('p1', 'teal', { limit: 2 })).toHaveLength(2)
    await memory.close()
  })

  it('never returns soft-deleted or purged facts, even after restore and purge', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.facts.set('p1', 'pet', 'a ferret named Bo')
    expect(await memory.search('p1', 'ferret')).toHaveLength(1)
    await memory.facts.delete('p1', 'pet')
    expect(await memory.search('p1', 'ferret')).toEqual([])
    await memory.facts.restore('p1', 'pet')
    expect(await memory.search('p1', 'ferret')).toHaveLength(1)
    await memory.facts.set('p1', 'pet', 'a cat named Mo')
    expect(await memory.search('p1', 'ferret')).toEqual([])
    expect(await memory.search('p1', 'cat')).toHaveLength(1)
    await memory.facts.purge('p1', 'pet')
    expect(await memory.search('p1', 'cat')).toEqual([])
    await memory.close()
  })

  it('keeps projects apart', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'A', id: 'a' })
    await memory.projects.create({ name: 'B', id: 'b' })
    await memory.archive.create('a', 'alpha secret')
    expect(await memory.search('b', 'alpha')).toEqual([])
    await memory.close()
  })
})
