import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { diffParts, splitDocument, splitTransaction } from './update-frames.js'

function bigDoc(): Y.Doc {
  const doc = new Y.Doc()
  const arr = doc.getArray<{ key: string; val: string }>('facts')
  for (let i = 0; i < 12; i++) doc.transact(() => arr.push([{ key: `k${i}`, val: String(i).repeat(100_000) }]))
  doc.transact(() => arr.delete(3, 2)) // a delete set to carry too
  doc.getMap('meta').set('m', 1)
  return doc
}

describe('splitting what is sent into frames', () => {
  it('cuts a backlog of 1.2 MB into parts under the limit that rebuild the same document in any order', () => {
    const doc = bigDoc()
    const parts = diffParts(doc, new Uint8Array([0]), 300_000)
    expect(parts.length).toBeGreaterThan(4)
    for (const p of parts) expect(p.update.byteLength).toBeLessThanOrEqual(300_000)
    for (const order of [parts, [...parts].reverse()]) {
      const copy = new Y.Doc()
      for (const p of order) Y.applyUpdate(copy, p.update)
      expect(copy.getArray('facts').toJSON()).toEqual(doc.getArray('facts').toJSON())
      expect(copy.getMap('meta').toJSON()).toEqual({ m: 1 })
      expect(Y.encodeStateVector(copy)).toEqual(Y.encodeStateVector(doc))
    }
  })

  it('sends only what the other side lacks, and a struct larger than the limit alone', () => {
    const doc = bigDoc()
    const other = new Y.Doc()
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc))
    doc.getArray<{ key: string; val: string }>('facts').push([{ key: 'new', val: 'y'.repeat(50_000) }])
    const parts = diffParts(doc, Y.encodeStateVector(other), 20_000)
    const structParts = parts.filter((p) => p.indivisible)
    expect(structParts).toHaveLength(1)
    for (const p of parts) Y.applyUpdate(other, p.update)
    expect(other.getArray('facts').toJSON()).toEqual(doc.getArray('facts').toJSON())
  })

  it('splits a large live transaction (structs and its deletes) and leaves small ones whole', () => {
    const doc = bigDoc()
    const other = new Y.Doc()
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc))
    const seen: Array<ReturnType<typeof splitTransaction>> = []
    doc.on('update', (update: Uint8Array, _origin: unknown, _doc: Y.Doc, tr: Y.Transaction) => seen.push(splitTransaction(doc, update, tr, 150_000)))
    const arr = doc.getArray<{ key: string; val: string }>('facts')
    doc.transact(() => {
      arr.delete(0, 2)
      for (let i = 0; i < 5; i++) arr.push([{ key: `b${i}`, val: 'z'.repeat(60_000) }])
    })
    arr.push([{ key: 'small', val: 's' }])
    expect(seen[0]!.length).toBeGreaterThan(1)
    expect(seen[1]).toHaveLength(1)
    for (const parts of seen) for (const p of parts) Y.applyUpdate(other, p.update)
    expect(other.getArray('facts').toJSON()).toEqual(arr.toJSON())
  })

  it('cuts a long delete set into several parts', () => {
    const doc = new Y.Doc()
    const arr = doc.getArray<number>('a')
    for (let i = 0; i < 4000; i++) arr.push([i])
    for (let i = 0; i < 2000; i++) arr.delete(i, 1) // every other item: 2,000 ranges
    const parts = splitDocument(doc, new Map(), Y.createDeleteSetFromStructStore(doc.store).clients, 4_000)
    const copy = new Y.Doc()
    for (const p of parts) {
      expect(p.update.byteLength).toBeLessThanOrEqual(4_000)
      Y.applyUpdate(copy, p.update)
    }
    expect(copy.getArray('a').toJSON()).toEqual(arr.toJSON())
  })
})
