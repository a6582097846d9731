import { IDBIndex, IDBObjectStore } from 'fake-indexeddb'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Memory } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

/*
 * After a small project's first search, its messages and the turns around
 * each are read into the query cache in the background (message-warm.ts), so
 * a later search reads no message row. Reads are counted on fake-indexeddb's
 * object stores and indexes (the `messages` store's gets, cursors and
 * getAlls, by the store they read).
 */

const reads: string[] = []
const restore: Array<() => void> = []
function countReads(proto: object, method: string, storeName: (self: never) => string): void {
  const target = proto as Record<string, (...args: unknown[]) => unknown>
  const original = target[method]!
  target[method] = function (this: never, ...args: unknown[]) {
    reads.push(storeName(this))
    return original.apply(this, args)
  }
  restore.push(() => void (target[method] = original))
}
beforeAll(() => {
  for (const method of ['get', 'getAll', 'openCursor']) {
    countReads(IDBObjectStore.prototype, method, (s: IDBObjectStore) => s.name)
    countReads(IDBIndex.prototype, method, (i: IDBIndex) => i.objectStore.name)
  }
})
afterAll(() => {
  for (const undo of restore) undo()
})
afterEach(() => {
  reads.length = 0
})

const TOPICS = ['kayak', 'violin', 'glacier', 'saffron', 'lantern', 'orchard']

async function smallStore(): Promise<{ memory: Memory; warmed: () => Promise<string> }> {
  let resolveWarm: (projectId: string) => void = () => {}
  let warm = new Promise<string>((resolve) => (resolveWarm = resolve))
  const memory = await openTestMemory({ onWarm: (projectId: string) => resolveWarm(projectId) } as Record<string, unknown>)
  await memory.projects.create({ name: 'P', id: 'p1' })
  for (const topic of TOPICS) {
    const s = await memory.sessions.create('p1')
    await memory.messages.appendMany(
      s.id,
      Array.from({ length: 12 }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        content: `${topic} note ${i}: about the ${topic} and turn ${i}`,
      })),
    )
  }
  return {
    memory,
    warmed: async () => {
      const projectId = await warm
      warm = new Promise<string>((resolve) => (resolveWarm = resolve))
      return projectId
    },
  }
}

describe('warming a small project into the query cache', () => {
  it('reads its messages and turn windows after the first search, so later searches read no message row', async () => {
    const { memory, warmed } = await smallStore()
    const first = await memory.search('p1', 'kayak note')
    expect(first[0]?.text).toContain('kayak')
    expect(reads).toContain('messages')
    expect(await warmed()).toBe('p1')

    reads.length = 0
    for (const topic of TOPICS.slice(1)) {
      const hits = await memory.search('p1', `${topic} turn`)
      expect(hits.length).toBeGreaterThan(0)
      expect(hits.every((h) => h.text.includes(topic))).toBe(true)
    }
    expect(reads.filter((name) => name === 'messages')).toEqual([])
    await memory.close()
  })

  it('still serves what changed after the warm', async () => {
    const { memory, warmed } = await smallStore()
    const [hit] = await memory.search('p1', 'glacier turn 3')
    await warmed()
    await memory.messages.edit(hit!.id, { content: 'glacier note 3, rewritten: the ice moved' })
    const again = await memory.search('p1', 'glacier ice moved')
    expect(again[0]?.text).toBe('glacier note 3, rewritten: the ice moved')
    await memory.close()
  })

  it('ends quietly when the store closes first', async () => {
    const { memory, warmed } = await smallStore()
    await memory.search('p1', 'saffron')
    await memory.close()
    // The warm starts after the search; it finds the store closed and ends without an error.
    expect(await warmed()).toBe('p1')
  })
})
