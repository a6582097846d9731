import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { SCHEMA } from '../schema.js'
import type { SegmentRef, TextSegRow } from './index-rows.js'
import { emptyList, type PostingList } from './posting-codec.js'
import { PACK_BYTES, segmentRows } from './segment-codec.js'
import { mergeLists, segmentLists, termInRow } from './segment-read.js'
import { dropSegments, updateSegments, type SegmentTable } from './segments.js'

/** A tiny deterministic generator (failures replay with the printed seed). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

/** Random postings of `terms` terms over documents from..to, in document order. */
function randomTerms(rand: () => number, terms: number, from: number, to: number): Map<string, PostingList> {
  const out = new Map<string, PostingList>()
  for (let t = 0; t < terms; t++) {
    const docs: number[] = []
    const p = rand() < 0.1 ? 0.6 : 0.02
    for (let n = from; n <= to; n++) if (rand() < p) docs.push(n)
    if (docs.length === 0) continue
    const list = emptyList(docs.length)
    docs.forEach((n, i) => {
      list.docs[i] = n
      list.tfs[i] = 1 + Math.floor(rand() * 70_000)
      list.kinds[i] = Math.floor(rand() * 4)
      list.lens[i] = Math.floor(rand() * 300)
    })
    list.count = docs.length
    out.set(`w${Math.floor(rand() * 1e9).toString(36)}${t}`, list)
  }
  return out
}

const plain = (l: PostingList | undefined) =>
  l ? Array.from({ length: l.count }, (_, i) => [l.docs[i], Math.min(l.tfs[i]!, 0xffff), l.kinds[i], l.lens[i]]) : []

/** The row a point read finds for `term`: the last row whose first term is not above it. */
const rowFor = (rows: readonly TextSegRow[], term: string) => rows.filter((r) => r.w <= term).at(-1)

async function segmentTable(): Promise<{ db: Dexie; table: SegmentTable }> {
  const db = new Dexie(`segments-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  db.version(1).stores(SCHEMA)
  await db.open()
  return { db, table: db.table('textSegs') as SegmentTable }
}

describe('segment rows', () => {
  it('pack terms in order into rows of a few kilobytes, and give back every term exactly', () => {
    const seed = Number(process.env.SEGMENT_SEED ?? 77)
    console.log(`segment codec seed ${seed}`)
    const terms = randomTerms(lcg(seed), 400, 1, 3000)
    const rows = segmentRows(3, 1, terms)
    expect(rows.length).toBeGreaterThan(5)
    expect(rows.map((r) => r.w)).toEqual(rows.map((r) => r.w).sort())
    for (const row of rows) {
      expect(row).toMatchObject({ q: 3, g: 1 })
      // A row closes once it passes PACK_BYTES: at most one term beyond it.
      const last = row.o.length > 1 ? row.o[row.o.length - 2]! : 0
      expect(last).toBeLessThan(PACK_BYTES)
    }
    for (const [term, list] of terms) expect(plain(termInRow(rowFor(rows, term)!, term)), term).toEqual(plain(list))
    expect(termInRow(rows[0]!, 'absent')).toBeUndefined()
    expect(termInRow(rows[0]!, '')).toBeUndefined()
  })

  it('merge lists of several sources into one in document order', () => {
    const list = (docs: number[]) => {
      const l = emptyList(docs.length)
      l.docs.set(docs)
      l.tfs.set(docs.map((d) => d % 7))
      l.lens.set(docs.map((d) => d * 2))
      l.count = docs.length
      return l
    }
    const merged = mergeLists([list([1, 5, 9]), list([]), list([2, 3, 10]), list([4])])!
    expect(Array.from(merged.docs.subarray(0, merged.count))).toEqual([1, 2, 3, 4, 5, 9, 10])
    expect(Array.from(merged.lens.subarray(0, merged.count))).toEqual([2, 4, 6, 8, 10, 18, 20])
    expect(mergeLists([list([])])).toBeUndefined()
  })
})

describe('updateSegments', () => {
  it('keeps a project at few segments (the newest compacted like a binary counter) and purges dead documents from all of them', async () => {
    const { db, table } = await segmentTable()
    let refs: SegmentRef[] = []
    const all: Array<Map<string, PostingList>> = []
    const apply = async (u: Awaited<ReturnType<typeof updateSegments>>) => {
      expect(u).toBeDefined()
      await dropSegments(table, 2, u!.drop)
      await table.bulkPut(u!.puts)
      refs = u!.refs
    }
    const counts: number[][] = []
    for (let batch = 0; batch < 6; batch++) {
      const from = batch * 100 + 1
      // The same terms and sizes each batch (shifted), so every batch holds as many postings.
      const fresh = randomTerms(lcg(5), 60, from, from + 99)
      all.push(fresh)
      await apply(await updateSegments(table, 2, refs, { g: from, terms: fresh }, undefined))
      counts.push(refs.map((r) => r.g))
    }
    // Batches of equal size merge pairwise: 1, 2 → 1 segment, 3 → 2, 4 → 1, 5 → 2, 6 → 2.
    expect(counts.map((c) => c.length)).toEqual([1, 1, 2, 1, 2, 2])
    expect(refs.map((r) => r.g)).toEqual([1, 401])
    const expected = (term: string, dead?: Set<number>) => {
      const lists = all.map((m) => m.get(term)).filter((l): l is PostingList => l !== undefined)
      return plain(mergeLists(lists)).filter((p) => !dead?.has(p[0]!))
    }
    const terms = [...new Set(all.flatMap((m) => [...m.keys()]))]
    for (const term of terms) expect(plain(mergeLists(await segmentLists(table, 2, refs, term))), term).toEqual(expected(term))
    expect(await segmentLists(table, 2, refs, 'absent')).toEqual([])

    // A purge rewrites every segment without the dead documents, as one.
    const dead = new Set(Array.from({ length: 600 }, (_, i) => i + 1).filter((n) => n % 3 === 0))
    await apply(await updateSegments(table, 2, refs, undefined, dead))
    expect(refs.map((r) => r.g)).toEqual([1])
    for (const term of terms) expect(plain(mergeLists(await segmentLists(table, 2, refs, term))), term).toEqual(expected(term, dead))
    expect(await table.where('[q+g+w]').between([2, 401, Dexie.minKey], [2, 401, Dexie.maxKey]).count()).toBe(0)
    // Nothing to add and nothing dead: nothing to do.
    expect(await updateSegments(table, 2, refs, undefined, undefined)).toBeUndefined()
    db.close()
  })
})
