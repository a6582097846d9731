import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint'
import { beforeEach, describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { EngramStore } from './engram-store.js'

/*
 * The behaviours LangGraph checks of its own stores (langgraphjs
 * libs/checkpoint/src/tests/store.test.ts "InMemoryStore" and
 * namespace.test.ts), run against EngramStore. Where EngramStore answers
 * differently the test says so and why (see docs/langgraph.md).
 */
let store: EngramStore

beforeEach(async () => {
  store = new EngramStore(await openTestMemory())
})

describe('EngramStore: LangGraph store.test.ts', () => {
  it('should implement get method', async () => {
    await store.put(['test'], '123', { value: 1 })
    expect(await store.get(['test'], '123')).toEqual({
      value: { value: 1 },
      key: '123',
      namespace: ['test'],
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    })
  })

  it('should implement search method', async () => {
    await store.put(['test'], '123', { value: 1 })
    await store.put(['test'], '456', { value: 2 })
    const result = await store.search(['test'])
    expect(result).toHaveLength(2)
    expect(result[0]).toMatchObject({ value: { value: 1 }, key: '123', namespace: ['test'] })
    expect(result[1]).toMatchObject({ value: { value: 2 }, key: '456', namespace: ['test'] })
  })

  it('should implement put method', async () => {
    await store.put(['test'], '123', { value: 1 })
    expect(await store.get(['test'], '123')).toMatchObject({ value: { value: 1 }, key: '123', namespace: ['test'] })
  })

  it('should implement delete method', async () => {
    await store.put(['test'], '123', { value: 1 })
    await store.delete(['test'], '123')
    expect(await store.get(['test'], '123')).toBeNull()
  })

  it('should implement listNamespaces method', async () => {
    await store.put(['a', 'b', 'c'], '1', { value: 1 })
    await store.put(['a', 'b', 'd'], '2', { value: 2 })
    await store.put(['x', 'y', 'z'], '3', { value: 3 })
    expect(await store.listNamespaces({})).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['x', 'y', 'z'],
    ])
  })

  it('should filter namespaces by prefix', async () => {
    await store.put(['a', 'b', 'c'], '1', { value: 1 })
    await store.put(['a', 'b', 'd'], '2', { value: 2 })
    await store.put(['x', 'y', 'z'], '3', { value: 3 })
    expect(await store.listNamespaces({ prefix: ['a'] })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
    ])
  })

  it('should apply maxDepth to listNamespaces results', async () => {
    await store.put(['a', 'b', 'c'], '1', { value: 1 })
    await store.put(['a', 'b', 'd'], '2', { value: 2 })
    await store.put(['x', 'y', 'z'], '3', { value: 3 })
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ['a', 'b'],
      ['x', 'y'],
    ])
  })

  it('Should block invalid namespaces in put', async () => {
    const doc = { foo: 'bar' }
    await expect(store.put([], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['the', 'thing.about'], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['some', 'fun', ''], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['langgraph', 'foo'], 'bar', doc)).rejects.toThrow(InvalidNamespaceError)

    await store.put(['foo', 'langgraph', 'foo'], 'bar', doc)
    expect((await store.get(['foo', 'langgraph', 'foo'], 'bar'))?.value).toEqual(doc)
    expect((await store.search(['foo', 'langgraph', 'foo']))[0]?.value).toEqual(doc)
    await store.delete(['foo', 'langgraph', 'foo'], 'bar')
    expect(await store.get(['foo', 'langgraph', 'foo'], 'bar')).toBeNull()

    // batch() is the low-level door: like InMemoryStore it accepts the reserved root.
    await store.batch([{ namespace: ['langgraph', 'foo'], key: 'bar', value: doc }])
    expect((await store.get(['langgraph', 'foo'], 'bar'))?.value).toEqual(doc)
    expect((await store.search(['langgraph', 'foo']))[0]?.value).toEqual(doc)
    await store.delete(['langgraph', 'foo'], 'bar')
    expect(await store.get(['langgraph', 'foo'], 'bar')).toBeNull()
  })
})

describe('EngramStore: LangGraph store.test.ts "BaseStore listNamespaces", on stored namespaces', () => {
  beforeEach(async () => {
    for (const ns of [
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['a', 'c', 'e'],
      ['x', 'y', 'z'],
    ])
      await store.put(ns, 'k', { v: ns.join('') })
  })

  it('should list all namespaces with default options', async () => {
    expect(await store.listNamespaces({})).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['a', 'c', 'e'],
      ['x', 'y', 'z'],
    ])
  })
  it('should filter namespaces by prefix', async () => {
    expect(await store.listNamespaces({ prefix: ['a'] })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['a', 'c', 'e'],
    ])
  })
  it('should filter namespaces by suffix', async () => {
    expect(await store.listNamespaces({ suffix: ['d'] })).toEqual([['a', 'b', 'd']])
  })
  it('should apply maxDepth to results (duplicates removed, as every real store does)', async () => {
    // LangGraph's mock keeps [a, b] twice; InMemoryStore and EngramStore list each namespace once.
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ['a', 'b'],
      ['a', 'c'],
      ['x', 'y'],
    ])
  })
  it('should apply limit and offset', async () => {
    expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
      ['a', 'b', 'd'],
      ['a', 'c', 'e'],
    ])
  })
  it('should combine prefix, suffix, and maxDepth filters', async () => {
    expect(await store.listNamespaces({ prefix: ['a'], suffix: ['c'], maxDepth: 2 })).toEqual([['a', 'b']])
  })
  it('should handle wildcard in prefix', async () => {
    expect(await store.listNamespaces({ prefix: ['a', '*', 'c'] })).toEqual([['a', 'b', 'c']])
  })
  it('should handle wildcard in suffix', async () => {
    expect(await store.listNamespaces({ suffix: ['*', 'z'] })).toEqual([['x', 'y', 'z']])
  })
  it('should return an empty array when no namespaces match', async () => {
    expect(await store.listNamespaces({ prefix: ['non', 'existent'] })).toEqual([])
  })
})

describe('EngramStore: LangGraph namespace.test.ts', () => {
  it('should handle basic namespace operations', async () => {
    const namespaces = [
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
      ['a', 'c', 'f'],
      ['b', 'a', 'f'],
      ['users', '123'],
      ['users', '456', 'settings'],
      ['admin', 'users', '789'],
    ]
    for (const [i, ns] of namespaces.entries()) await store.put(ns, `id_${i}`, { data: `value_${String(i).padStart(2, '0')}` })

    expect((await store.listNamespaces({ prefix: ['a', 'b'] })).sort()).toEqual(
      [
        ['a', 'b', 'c'],
        ['a', 'b', 'd', 'e'],
        ['a', 'b', 'd', 'i'],
        ['a', 'b', 'f'],
      ].sort(),
    )
    expect((await store.listNamespaces({ suffix: ['f'] })).sort()).toEqual(
      [
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
        ['b', 'a', 'f'],
      ].sort(),
    )
    expect((await store.listNamespaces({ prefix: ['a'], suffix: ['f'] })).sort()).toEqual(
      [
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
      ].sort(),
    )
    expect((await store.listNamespaces({ prefix: ['a', 'b'], maxDepth: 3 })).sort()).toEqual(
      [
        ['a', 'b', 'c'],
        ['a', 'b', 'd'],
        ['a', 'b', 'f'],
      ].sort(),
    )
    expect(await store.listNamespaces({ prefix: ['a', 'b'], limit: 2 })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
    ])
    expect(await store.listNamespaces({ prefix: ['a', 'b'], offset: 2 })).toEqual([
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
    ])
  })

  it('should handle wildcards in namespace operations', async () => {
    const namespaces = [
      ['users', '123'],
      ['users', '456'],
      ['users', '789', 'settings'],
      ['admin', 'users', '789'],
      ['guests', '123'],
      ['guests', '456', 'preferences'],
    ]
    for (const [i, ns] of namespaces.entries()) await store.put(ns, `id_${i}`, { data: `value_${i}` })

    expect((await store.listNamespaces({ prefix: ['users', '*'] })).sort()).toEqual(
      [
        ['users', '123'],
        ['users', '456'],
        ['users', '789', 'settings'],
      ].sort(),
    )
    expect(await store.listNamespaces({ suffix: ['*', 'preferences'] })).toEqual([['guests', '456', 'preferences']])
    expect(await store.listNamespaces({ prefix: ['*', 'users'], suffix: ['*', 'settings'] })).toEqual([])
    await store.put(['admin', 'users', 'settings', '789'], 'foo', { data: 'some_val' })
    expect(await store.listNamespaces({ prefix: ['*', 'users'], suffix: ['settings', '*'] })).toEqual([['admin', 'users', 'settings', '789']])
  })

  it('should handle pagination in namespace operations', async () => {
    for (let i = 0; i < 20; i++) {
      const n = String(i).padStart(2, '0')
      await store.put(['namespace', `sub_${n}`], `id_${n}`, { data: `value_${n}` })
    }
    const expected = (from: number) => Array.from({ length: 5 }, (_, i) => ['namespace', `sub_${String(i + from).padStart(2, '0')}`])
    expect(await store.listNamespaces({ prefix: ['namespace'], limit: 5, offset: 0 })).toEqual(expected(0))
    expect(await store.listNamespaces({ prefix: ['namespace'], limit: 5, offset: 5 })).toEqual(expected(5))
    expect(await store.listNamespaces({ prefix: ['namespace'], limit: 5, offset: 15 })).toEqual(expected(15))
  })

  it('should handle maxDepth in namespace operations', async () => {
    const namespaces = [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'e'],
      ['a', 'b', 'f'],
      ['a', 'g'],
      ['h', 'i', 'j', 'k'],
    ]
    for (const [i, ns] of namespaces.entries()) await store.put(ns, `id_${i}`, { data: `value_${i}` })
    expect((await store.listNamespaces({ maxDepth: 2 })).sort()).toEqual(
      [
        ['a', 'b'],
        ['a', 'g'],
        ['h', 'i'],
      ].sort(),
    )
  })

  it('should handle empty store in namespace operations', async () => {
    expect(await store.listNamespaces({})).toEqual([])
  })

  it('should block invalid namespaces', async () => {
    const doc = { foo: 'bar' }
    await expect(store.put([], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['the', 'thing.about'], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['some', 'fun', ''], 'foo', doc)).rejects.toThrow(InvalidNamespaceError)
    await expect(store.put(['langgraph', 'foo'], 'bar', doc)).rejects.toThrow(InvalidNamespaceError)
    await store.batch([{ namespace: ['valid', 'namespace'], key: 'key', value: doc }])
    expect((await store.get(['valid', 'namespace'], 'key'))?.value).toEqual(doc)
    expect((await store.search(['valid', 'namespace']))[0]?.value).toEqual(doc)
    await store.delete(['valid', 'namespace'], 'key')
    expect(await store.get(['valid', 'namespace'], 'key')).toBeNull()
  })
})
