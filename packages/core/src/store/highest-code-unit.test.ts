// As in a browser: a global IndexedDB, so Dexie's maxKey is an array key above every string key.
import 'fake-indexeddb/auto'
import { describe, expect, it } from 'vitest'
import { openMemory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'

/*
 * A key may start with U+FFFF, the highest UTF-16 code unit; a range that ends
 * at '\uffff' instead of above every string leaves such keys out.
 */
let counter = 0
async function store() {
  const memory = await openMemory({ appId: 'uffff', userId: `u${++counter}` })
  await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
  await memory.facts.set('p', '\uffffa', 1)
  await memory.facts.set('p', '\uffff', 2)
  await memory.facts.set('p', 'b', 3)
  return memory
}

describe('facts whose key starts with U+FFFF', () => {
  it('are listed, paged, exported and deleted like any other', async () => {
    const memory = await store()
    expect((await memory.facts.list('p')).items.map((f) => f.key)).toEqual(['b', '\uffff', '\uffffa'])
    const first = await memory.facts.list('p', { limit: 2 })
    expect((await memory.facts.list('p', { after: first.next })).items.map((f) => f.key)).toEqual(['\uffffa'])
    expect((await memory.facts.list('p', { prefix: '\uffff' })).items.map((f) => f.key)).toEqual(['\uffff', '\uffffa'])
    expect(((await memory.export('p')).tables.facts as { key: string }[]).map((f) => f.key).sort()).toEqual(['b', '\uffff', '\uffffa'])
    expect(await memory.facts.deleteAll('p')).toBe(3)
    await memory.close()
  })

  it('are in the replication snapshot of their project', async () => {
    const memory = await store()
    try {
      const { records } = await replicationOf(memory).snapshot('p')
      expect(
        records
          .filter((r) => r.kind === 'facts')
          .map((r) => r.id)
          .sort(),
      ).toEqual(['p/%EF%BF%BF', 'p/%EF%BF%BFa', 'p/b'])
    } finally {
      await memory.close()
    }
  })
})
