import { createMemory, factsModule, MemoryError } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { EngramStore } from './engram-store.js'

describe('EngramStore', () => {
  it('filters with the operators InMemoryStore accepts', async () => {
    const store = new EngramStore(await openTestMemory())
    await store.put(['docs'], 'a', { kind: 'note', stars: 1 })
    await store.put(['docs'], 'b', { kind: 'task', stars: 3 })
    await store.put(['docs'], 'c', { kind: 'note', stars: 5 })
    const keys = async (filter: Record<string, unknown>) => (await store.search(['docs'], { filter })).map((i) => i.key)
    expect(await keys({ kind: 'note' })).toEqual(['a', 'c'])
    expect(await keys({ kind: { $eq: 'task' } })).toEqual(['b'])
    expect(await keys({ kind: { $ne: 'task' } })).toEqual(['a', 'c'])
    expect(await keys({ stars: { $gt: 1 } })).toEqual(['b', 'c'])
    expect(await keys({ stars: { $gte: 3, $lt: 5 } })).toEqual(['b'])
    expect(await keys({ stars: { $lte: 1 } })).toEqual(['a'])
    expect(await keys({ stars: { $in: [1, 5] } })).toEqual(['a', 'c'])
    expect(await keys({ stars: { $nin: [1, 5] } })).toEqual(['b'])
    expect(await keys({ kind: 'note', stars: { $gt: 2 } })).toEqual(['c'])
    expect((await store.search(['docs'], { limit: 1, offset: 1 })).map((i) => i.key)).toEqual(['b'])
  })

  it('answers query with Engram search over the indexed fields, best first, within the prefix and filter', async () => {
    const store = new EngramStore(await openTestMemory(), { index: { fields: ['text'] } })
    await store.put(['users', 'u1'], 'm1', { text: 'prefers dark mode in every editor', kind: 'pref' })
    await store.put(['users', 'u1'], 'm2', { text: 'lives in Lisbon', kind: 'fact' })
    await store.put(['users', 'u2'], 'm3', { text: 'dark chocolate lover', kind: 'pref' })
    await store.put(['users', 'u1'], 'm4', { text: 'secret dark plan', kind: 'pref' }, false)
    const hits = await store.search(['users', 'u1'], { query: 'dark mode' })
    expect(hits.map((h) => h.key)).toEqual(['m1'])
    expect(hits[0]?.score).toBeGreaterThan(0)
    expect((await store.search(['users'], { query: 'dark' })).map((h) => h.key).sort()).toEqual(['m1', 'm3'])
    expect(await store.search(['users'], { query: 'dark', filter: { kind: 'pref' }, limit: 1 })).toHaveLength(1)
    // Only the indexed field is searched: `kind` values are not.
    expect(await store.search(['users'], { query: 'pref' })).toEqual([])
  })

  it('asks search for more hits when the best ones are outside the prefix', async () => {
    const store = new EngramStore(await openTestMemory(), { index: { fields: ['text'] } })
    for (let i = 0; i < 60; i++) await store.batch([{ namespace: ['other'], key: `o${i}`, value: { text: 'apple apple apple' } }])
    for (let i = 0; i < 3; i++) await store.put(['mine'], `m${i}`, { text: `apple with a long tail of other words number ${i} to lower its score` })
    expect((await store.search(['mine'], { query: 'apple', limit: 3 })).map((h) => h.key).sort()).toEqual(['m0', 'm1', 'm2'])
  })

  it('re-indexes an item on update and forgets it on delete', async () => {
    const memory = await openTestMemory()
    const store = new EngramStore(memory)
    await store.put(['n'], 'k', { text: 'apples' })
    const first = await store.get(['n'], 'k')
    await store.put(['n'], 'k', { text: 'oranges' })
    expect((await store.search(['n'], { query: 'apples' })).map((h) => h.key)).toEqual([])
    expect((await store.search(['n'], { query: 'oranges' })).map((h) => h.key)).toEqual(['k'])
    const second = await store.get(['n'], 'k')
    expect(second?.createdAt).toEqual(first?.createdAt)
    expect(second?.updatedAt.getTime()).toBeGreaterThanOrEqual(first!.updatedAt.getTime())
    expect((await memory.archive.list(store.projectId)).items).toHaveLength(1)
    await store.delete(['n'], 'k')
    expect(await store.search(['n'], { query: 'oranges' })).toEqual([])
    expect((await memory.archive.list(store.projectId)).items).toHaveLength(0)
  })

  it('keeps items in IndexedDB across reopening', async () => {
    const indexedDB = new IDBFactory()
    const first = await openTestMemory({ indexedDB, userId: 'reopen' })
    await new EngramStore(first, { projectId: 'agent' }).put(['prefs'], 'theme', { value: 'dark' })
    await first.close()
    const again = await openTestMemory({ indexedDB, userId: 'reopen' })
    const store = new EngramStore(again, { projectId: 'agent' })
    expect((await store.get(['prefs'], 'theme'))?.value).toEqual({ value: 'dark' })
    expect((await again.projects.get('agent'))?.name).toBe('LangGraph store')
  })

  it('works on a facts-only memory, and says that query needs search', async () => {
    const memory = await createMemory({ appId: 'store', userId: 'facts-only', indexedDB: new IDBFactory(), IDBKeyRange, modules: [factsModule()] })
    const store = new EngramStore(memory)
    await store.put(['a'], 'k', { x: 1 })
    expect((await store.search(['a'])).map((i) => i.value)).toEqual([{ x: 1 }])
    await expect(store.search(['a'], { query: 'x' })).rejects.toMatchObject({ name: 'MemoryError', code: 'invalid_input' })
  })

  it('refuses bad options and input with MemoryError codes', async () => {
    const memory = await openTestMemory()
    expect(() => new EngramStore({} as never)).toThrow(MemoryError)
    expect(() => new EngramStore(memory, { projectid: 'x' } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => new EngramStore(memory, { index: { fields: [''] } })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    const store = new EngramStore(memory)
    await expect(store.search(['a'], { limit: -1 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(store.put(['a'], 'big', { text: 'x'.repeat(1_100_000) }, false)).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect(await store.get(['a'], 'big')).toBeNull()
  })
})
