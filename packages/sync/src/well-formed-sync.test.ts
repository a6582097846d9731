import { afterEach, describe, expect, it } from 'vitest'
import { createLoopbackNetwork, type SyncOptions } from '@engram/sync'
import { closeAll, mirroredState, openReplica, settle, type Replica } from '../test/replicas.js'

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

const HIGH = '\uD83D' // half of an emoji, as an LLM reply cut short ends
const LOW = '\uDE00'

const variants: Array<[string, () => Promise<Partial<SyncOptions>>]> = [
  ['in clear', async () => ({})],
  ['encrypted', async () => ({ encryption: { key: await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) } })],
]

/** What a device shows of project `p` through the API, comparable across devices. */
async function shown(r: Replica, sessionId: string) {
  const { memory } = r
  return {
    fact: (await memory.facts.get('p', 'k'))?.value,
    block: await memory.blocks.get('p', 'persona'),
    summaries: (await memory.summaries.list('p')).items.map((s) => s.text),
    patterns: (await memory.patterns.list('p')).map((x) => x.text),
    session: (await memory.sessions.get(sessionId))?.title,
    messages: (await memory.messages.tail(sessionId, 10)).map((m) => [m.content, m.meta]),
    artifacts: (await memory.artifacts.list('p')).items.map((x) => [x.name, x.meta]),
  }
}

describe.each(variants)('a lone surrogate in synced text (%s)', (_variant, options) => {
  it('reads back identically on both devices (U+FFFD, as the writer stored it), in every synced kind', async () => {
    const network = createLoopbackNetwork()
    const extra = await options()
    const a = await openReplica('a', network, extra)
    const b = await openReplica('b', network, { start: Date.UTC(2026, 0, 1) + 1, ...extra })
    open.push(a, b)
    for (const r of [a, b]) await r.memory.projects.setSync('p', { messages: true })
    await settle(network, [a, b])
    await a.memory.facts.set('p', 'k', { note: `cut ${HIGH}`, [`key ${LOW}`]: [`item ${HIGH}`] })
    await a.memory.blocks.set('p', 'persona', `likes ${HIGH}`, { description: `about ${LOW}` })
    await a.memory.summaries.create('p', { kind: 'project', text: `summary ${HIGH}` })
    await a.memory.patterns.observe('p', `walks at noon ${LOW}`)
    const session = await a.memory.sessions.create('p', { title: `chat ${HIGH}` })
    await a.memory.messages.append(session.id, { role: 'assistant', content: `a reply cut short ${HIGH}`, meta: { [`m${LOW}`]: `x${HIGH}` } })
    await a.memory.artifacts.put('p', { name: `report ${HIGH}.txt`, mimeType: 'text/plain', data: 'x', meta: { title: `t ${LOW}` } })
    await settle(network, [a, b])
    const onA = await shown(a, session.id)
    expect(await shown(b, session.id)).toEqual(onA)
    expect(onA).toMatchObject({
      fact: { note: 'cut \uFFFD', 'key \uFFFD': ['item \uFFFD'] },
      block: { value: 'likes \uFFFD', description: 'about \uFFFD' },
      summaries: ['summary \uFFFD'],
      patterns: ['walks at noon \uFFFD'],
      session: 'chat \uFFFD',
      messages: [['a reply cut short \uFFFD', { 'm\uFFFD': 'x\uFFFD' }]],
      artifacts: [['report \uFFFD.txt', { title: 't \uFFFD' }]],
    })
    expect(await mirroredState(b)).toEqual(await mirroredState(a))
    // The other way too, and nothing is reported.
    await b.memory.blocks.set('p', 'persona', `from b ${LOW}`)
    await settle(network, [a, b])
    expect((await a.memory.blocks.get('p', 'persona'))?.value).toBe('from b \uFFFD')
    expect(await mirroredState(b)).toEqual(await mirroredState(a))
    expect([...a.errors, ...b.errors]).toEqual([])
  })
})
