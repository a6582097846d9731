import { IDBFactory } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import type { Memory } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'
import type { WriteNotice } from './foreign-writes.js'

/*
 * Two connections to one database (two tabs' workers): what one writes, the other's search and
 * context see once its notice arrived (foreign-writes.ts), though the other had searched and
 * cached before. Each test waits for the notice it expects, never for time.
 */

/** A store on `indexedDB` whose notices received can be awaited: the next one naming a project and kind (merges and others skipped). */
async function connect(
  indexedDB: IDBFactory,
  userId: string,
): Promise<{ memory: Memory & { indexedDB: IDBFactory }; notice: (projectId: string, kind: string) => Promise<WriteNotice>; received: WriteNotice[] }> {
  const queue: WriteNotice[] = []
  const received: WriteNotice[] = []
  let wake: (() => void) | undefined
  const memory = await openTestMemory({
    indexedDB,
    userId,
    onForeignWrite: (n: WriteNotice) => {
      queue.push(n)
      received.push(n)
      wake?.()
    },
  } as Record<string, unknown>)
  return {
    memory,
    received,
    async notice(projectId, kind) {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve))
        const next = queue.shift()!
        if (next.projects[projectId]?.includes(kind as never)) return next
      }
    },
  }
}

const TOPICS = ['kayak', 'violin', 'glacier', 'saffron']

describe('writes of another connection to the same database', () => {
  it('a second store sees the first one’s new message in search', async () => {
    const indexedDB = new IDBFactory()
    const a = await connect(indexedDB, 'two-tabs-search')
    await a.memory.projects.create({ id: 'p1', name: 'P' })
    const session = await a.memory.sessions.create('p1')
    for (const topic of TOPICS) await a.memory.messages.append(session.id, { role: 'user', content: `a note about the ${topic}` })
    const b = await connect(indexedDB, 'two-tabs-search')
    // B loads its index state and caches the hits.
    expect((await b.memory.search('p1', 'kayak note'))[0]?.text).toBe('a note about the kayak')
    expect(await b.memory.search('p1', 'lighthouse')).toEqual([])

    await a.memory.messages.append(session.id, { role: 'assistant', content: 'the lighthouse keeper waved' })
    await b.notice('p1', 'messages')
    expect((await b.memory.search('p1', 'lighthouse keeper'))[0]?.text).toBe('the lighthouse keeper waved')
    // And the other way round.
    await b.memory.messages.append(session.id, { role: 'user', content: 'a violin bow of pernambuco' })
    await a.notice('p1', 'messages')
    expect((await a.memory.search('p1', 'pernambuco'))[0]?.text).toBe('a violin bow of pernambuco')
    a.memory.close()
    b.memory.close()
  })

  it('a second store’s context shows the first one’s new fact', async () => {
    const indexedDB = new IDBFactory()
    const a = await connect(indexedDB, 'two-tabs-facts')
    await a.memory.projects.create({ id: 'p1', name: 'P' })
    await a.memory.facts.set('p1', 'editor', 'vim')
    const b = await connect(indexedDB, 'two-tabs-facts')
    expect((await b.memory.context.build('p1', { budget: 500 })).text).toContain('vim')
    await a.memory.facts.set('p1', 'editor', 'helix')
    await b.notice('p1', 'facts')
    const text = (await b.memory.context.build('p1', { budget: 500 })).text
    expect(text).toContain('helix')
    expect(text).not.toContain('vim')
    a.memory.close()
    b.memory.close()
  })

  // On the global IndexedDB (the `globals` project) every store shares one factory: there is no other to hear nothing from.
  it.skipIf(process.env.ENGRAM_TEST_GLOBALS === '1')('a store on another factory with the same name hears nothing', async () => {
    const one = await connect(new IDBFactory(), 'two-factories')
    const other = await connect(new IDBFactory(), 'two-factories')
    const session = (await one.memory.sessions.create('user')).id
    await one.memory.messages.append(session, { role: 'user', content: 'first' })
    // A marker through `other`'s own factory: a notice from `one` would have come before it.
    const peer = await connect(other.memory.indexedDB, 'two-factories')
    await peer.memory.facts.set('user', 'marker', 1)
    expect((await other.notice('user', 'facts')).projects).toEqual({ user: ['facts'] })
    expect(other.received.filter((n) => n.projects.user?.includes('messages'))).toEqual([])
    for (const m of [one, other, peer]) m.memory.close()
  })
})
