import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import { KeyValue, type KeyValueChange } from './key-value.js'

const sync = (a: Y.Doc, b: Y.Doc): void => {
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)))
  Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)))
}
const live = (kv: { map: Map<string, { val: unknown }> }): Record<string, unknown> => Object.fromEntries([...kv.map].map(([k, v]) => [k, v.val]).sort())

describe('KeyValue (the YKeyValue layout with writes that do not scan the array)', () => {
  it('get / set / delete with add, update and delete events', () => {
    const doc = new Y.Doc()
    const kv = new KeyValue<number>(doc.getArray('a'))
    const events: Array<[string, KeyValueChange<number>]> = []
    kv.on('change', (changes: Map<string, KeyValueChange<number>>) => events.push(...changes))
    kv.set('x', 1)
    kv.set('y', 2)
    kv.set('x', 3)
    kv.delete('y')
    expect(kv.get('x')).toBe(3)
    expect(kv.has('y')).toBe(false)
    expect(doc.getArray('a').toJSON()).toEqual([{ key: 'x', val: 3 }])
    expect(events).toEqual([
      ['x', { action: 'add', newValue: 1 }],
      ['y', { action: 'add', newValue: 2 }],
      ['x', { action: 'update', oldValue: 1, newValue: 3 }],
      ['y', { action: 'delete', oldValue: 2 }],
    ])
  })

  it('deletes one pair out of an item that holds many (Yjs merges consecutive pushes)', () => {
    const doc = new Y.Doc()
    const kv = new KeyValue<number>(doc.getArray('a'))
    doc.transact(() => {
      for (let i = 0; i < 10; i++) doc.getArray('a').push([{ key: `k${i}`, val: i }])
    })
    const fresh = new KeyValue<number>(doc.getArray('a'))
    fresh.set('k4', 40)
    expect(kv.get('k4')).toBe(40)
    expect(
      doc
        .getArray('a')
        .toJSON()
        .map((e: { key: string }) => e.key),
    ).toEqual(['k0', 'k1', 'k2', 'k3', 'k5', 'k6', 'k7', 'k8', 'k9', 'k4'])
  })

  it('reads and writes the same documents as y-utility YKeyValue, and both converge on concurrent writes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ side: fc.boolean(), key: fc.constantFrom('a', 'b', 'c'), val: fc.integer(), sync: fc.boolean() }), { maxLength: 40 }),
        (ops) => {
          const ours = new Y.Doc()
          const theirs = new Y.Doc()
          const a = new KeyValue<number>(ours.getArray('kv'))
          const b = new YKeyValue<number>(theirs.getArray('kv'))
          for (const op of ops) {
            if (op.side) a.set(op.key, op.val)
            else b.set(op.key, op.val)
            if (op.sync) sync(ours, theirs)
          }
          sync(ours, theirs)
          sync(ours, theirs)
          expect(live(a)).toEqual(live(b as never))
          expect(ours.getArray('kv').toJSON()).toEqual(theirs.getArray('kv').toJSON())
          // one pair per key is left in the array
          const keys = ours
            .getArray<{ key: string }>('kv')
            .toArray()
            .map((e) => e.key)
          expect(new Set(keys).size).toBe(keys.length)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('keeps the rightmost of duplicate pairs found when it is created', () => {
    const doc = new Y.Doc()
    const arr = doc.getArray<{ key: string; val: number }>('a')
    arr.push([
      { key: 'k', val: 1 },
      { key: 'j', val: 5 },
      { key: 'k', val: 2 },
    ])
    const kv = new KeyValue<number>(arr)
    expect(kv.get('k')).toBe(2)
    expect(arr.toJSON()).toEqual([
      { key: 'j', val: 5 },
      { key: 'k', val: 2 },
    ])
  })

  it('index operations of Yjs stay right after deletes by id (search markers)', () => {
    const doc = new Y.Doc()
    const arr = doc.getArray<{ key: string; val: number }>('a')
    const kv = new KeyValue<number>(arr)
    for (let round = 0; round < 3; round++) for (let i = 0; i < 50; i++) kv.set(`k${i}`, round * 100 + i)
    expect(arr.get(10)).toEqual(arr.toArray()[10])
    expect(arr.get(49)).toEqual({ key: 'k49', val: 249 })
    expect(arr.length).toBe(50)
  })

  it('keeps Yjs items short, so an overwrite never copies a long run of pairs (also for a bulk write in one transaction)', () => {
    const doc = new Y.Doc()
    const kv = new KeyValue<number>(doc.getArray('a'))
    for (let i = 0; i < 1000; i++) kv.set(`k${i}`, i)
    doc.transact(() => {
      for (let i = 1000; i < 2000; i++) kv.set(`k${i}`, i)
    })
    const longest = Math.max(...doc.store.clients.get(doc.clientID)!.map((s) => s.length))
    expect(longest).toBeLessThanOrEqual(129)
    for (let i = 0; i < 2000; i += 7) kv.set(`k${i}`, -i)
    expect(kv.get('k700')).toBe(-700)
    expect(kv.map.size).toBe(2000)
    expect(doc.getArray('a').length).toBe(2000)
    // the same pairs as a fresh reader sees them
    expect(live(new KeyValue<number>(doc.getArray('a')))).toEqual(live(kv))
  })
})
