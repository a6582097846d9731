import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { SCHEMA } from '../../catalog/schema.js'
import type { SegmentRef, TextDirRow, TextSegDocsRow, TextSegRow } from './index-rows.js'
import { emptyList, type PostingList } from './posting-codec.js'
import { PACK_BYTES, PART_POSTINGS, segmentRows } from './segment-codec.js'
import { mergeLists, segmentLists, termInRow } from './segment-read.js'
import { dirRowOf, docIn, readDir, termPlace, type DirTable, type SegDocsTable, type SegmentDocs } from './segment-dirs.js'
import { dropSegments, updateSegments, type SegmentTable, type SegmentTables } from './segments.js'

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

async function segmentTable(): Promise<{ db: Dexie; table: SegmentTable; dirs: DirTable; lists: SegDocsTable; tables: SegmentTables }> {
  const db = new Dexie(`segments-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  db.version(1).stores(SCHEMA)
  await db.open()
  const table = db.table('textSegs') as SegmentTable
  const dirs = db.table('textDirs') as DirTable
  const lists = db.table('textSegDocs') as SegDocsTable
  return { db, table, dirs, lists, tables: { textSegs: table, textDirs: dirs, textSegDocs: lists } }
}

/** The documents from..to of a test segment: ids and times derived from their numbers. */
function docsOf(from: number, to: number): SegmentDocs {
  const n = Array.from({ length: to - from + 1 }, (_, i) => from + i)
  return { n, d: n.map((x) => `message:m${x}`), a: n.map((x) => x * 10) }
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

describe('a frequent term', () => {
  it('takes rows of its own, each far below 64 KiB, found through the directory and without it, and through compaction', async () => {
    const { db, table, tables } = await segmentTable()
    const many = (from: number, count: number, step: number) => {
      const list = emptyList(count)
      for (let i = 0; i < count; i++) {
        list.docs[i] = from + i * step
        list.tfs[i] = 1 + (i % 5)
        list.kinds[i] = i % 4
        list.lens[i] = 10 + (i % 300)
      }
      list.count = count
      return list
    }
    // "big" has 2.5 rows of postings; "bi" and "bigger" sort just before and after it; "big\u0001" can never be a term.
    const terms = new Map([
      ['bi', many(1, 3, 7)],
      ['big', many(1, 2 * PART_POSTINGS + 500, 2)],
      ['bigger', many(2, 40, 3)],
      ['zoo', many(5, PART_POSTINGS, 1)],
    ])
    const rows = segmentRows(7, 1, terms)
    // "zoo" (no more than a part) shares the row of "bigger".
    expect(rows.map((r) => r.w)).toEqual(['bi', 'big', 'big\u0000\u0001', 'big\u0000\u0002', 'bigger'])
    expect(rows.map((r) => r.w)).toEqual(rows.map((r) => r.w).sort())
    for (const row of rows) expect(row.p.length).toBeLessThan(32 * 1024)
    await table.bulkPut(rows)
    const dir = readDir(dirRowOf(7, 1, rows))
    expect(dir.terms).toEqual(['bi', 'big', 'bigger', 'zoo'])
    expect(Array.from(dir.split)).toEqual([1])
    const refs = [{ g: 1, c: 0 }]
    for (const [term, list] of terms) {
      expect(plain(mergeLists(await segmentLists(table, 7, refs, term, () => dir))), term).toEqual(plain(list))
      expect(plain(mergeLists(await segmentLists(table, 7, refs, term))), term).toEqual(plain(list))
    }
    // Compacted with a later segment holding the term too: its parts are read back in order.
    const later = new Map([['big', many(20_000, PART_POSTINGS + 1, 1)]])
    const u = (await updateSegments(tables, 7, [{ g: 1, c: 10_000 }], { g: 20_000, terms: later }, undefined))!
    await dropSegments(tables, 7, u.drop)
    await table.bulkPut(u.puts)
    const merged = readDir(u.dir!)
    expect(plain(mergeLists(await segmentLists(table, 7, u.refs, 'big', () => merged)))).toEqual(plain(mergeLists([terms.get('big')!, later.get('big')!])))
    db.close()
  })
})

describe('updateSegments', () => {
  it('keeps a project at few segments (the newest compacted like a binary counter) and purges dead documents from all of them', async () => {
    const { db, table, dirs, lists, tables } = await segmentTable()
    let refs: SegmentRef[] = []
    const all: Array<Map<string, PostingList>> = []
    const apply = async (u: Awaited<ReturnType<typeof updateSegments>>) => {
      expect(u).toBeDefined()
      await dropSegments(tables, 2, u!.drop)
      await table.bulkPut(u!.puts)
      if (u!.dir) await dirs.put(u!.dir)
      if (u!.docs) await lists.put(u!.docs)
      refs = u!.refs
    }
    const counts: number[][] = []
    for (let batch = 0; batch < 6; batch++) {
      const from = batch * 100 + 1
      // The same terms and sizes each batch (shifted), so every batch holds as many postings.
      const fresh = randomTerms(lcg(5), 60, from, from + 99)
      all.push(fresh)
      await apply(await updateSegments(tables, 2, refs, { g: from, terms: fresh, docs: docsOf(from, from + 99) }, undefined))
      counts.push(refs.map((r) => r.g))
    }
    // Batches of equal size merge pairwise: 1, 2 → 1 segment, 3 → 2, 4 → 1, 5 → 2, 6 → 2.
    expect(counts.map((c) => c.length)).toEqual([1, 1, 2, 1, 2, 2])
    expect(refs.map((r) => r.g)).toEqual([1, 401])
    // Exactly one directory and document list per segment, none left of the segments compacted away.
    expect((await dirs.toArray()).map((r) => r.g)).toEqual([1, 401])
    expect((await lists.toArray()).map((r) => r.g)).toEqual([1, 401])
    const listOf = async (g: number) => (await lists.get([2, g])) as TextSegDocsRow
    const expected = (term: string, dead?: Set<number>) => {
      const lists = all.map((m) => m.get(term)).filter((l): l is PostingList => l !== undefined)
      return plain(mergeLists(lists)).filter((p) => !dead?.has(p[0]!))
    }
    const terms = [...new Set(all.flatMap((m) => [...m.keys()]))]
    const loaded = async () => new Map((await dirs.bulkGet(refs.map((r) => [2, r.g]))).map((row) => [row!.g, readDir(row!)]))
    let byDir = await loaded()
    for (const term of terms) {
      expect(plain(mergeLists(await segmentLists(table, 2, refs, term))), term).toEqual(expected(term))
      // Through the directories: the same postings, read by the key of the row that holds the term.
      expect(plain(mergeLists(await segmentLists(table, 2, refs, term, (g) => byDir.get(g)))), term).toEqual(expected(term))
    }
    expect(await segmentLists(table, 2, refs, 'absent')).toEqual([])
    for (const dir of byDir.values()) expect(termPlace(dir, 2, 1, 'absent')).toBeUndefined()
    // Every document is listed by the segment that holds its number, with its id and time.
    expect(docIn(await listOf(1), 400)).toEqual({ d: 'message:m400', a: 4000 })
    expect(docIn(await listOf(401), 401)).toEqual({ d: 'message:m401', a: 4010 })
    expect(docIn(await listOf(1), 401)).toBeUndefined()

    // A purge rewrites every segment without the dead documents, as one.
    const dead = new Set(Array.from({ length: 600 }, (_, i) => i + 1).filter((n) => n % 3 === 0))
    await apply(await updateSegments(tables, 2, refs, undefined, dead))
    expect(refs.map((r) => r.g)).toEqual([1])
    byDir = await loaded()
    for (const term of terms) {
      expect(plain(mergeLists(await segmentLists(table, 2, refs, term))), term).toEqual(expected(term, dead))
      expect(plain(mergeLists(await segmentLists(table, 2, refs, term, (g) => byDir.get(g)))), term).toEqual(expected(term, dead))
    }
    expect(await table.where('[q+g+w]').between([2, 401, Dexie.minKey], [2, 401, Dexie.maxKey]).count()).toBe(0)
    expect((await dirs.toArray()).map((r) => r.g)).toEqual([1])
    expect((await lists.toArray()).map((r) => r.g)).toEqual([1])
    expect((await listOf(1)).n.length).toBe(400)
    expect(docIn(await listOf(1), 3)).toBeUndefined()
    expect(docIn(await listOf(1), 599)).toEqual({ d: 'message:m599', a: 5990 })
    // Nothing to add and nothing dead: nothing to do.
    expect(await updateSegments(tables, 2, refs, undefined, undefined)).toBeUndefined()
    db.close()
  })

  it('compacts a segment written before directories into one with a directory of its terms but no document list', async () => {
    const { db, table, dirs, lists, tables } = await segmentTable()
    const first = randomTerms(lcg(9), 40, 1, 100)
    const second = randomTerms(lcg(9), 40, 101, 200)
    // The older segment is written without a directory (as a version 5 store did).
    const old = await updateSegments({ textSegs: table }, 4, [], { g: 1, terms: first }, undefined)
    expect(old!.dir).toBeUndefined()
    expect(old!.docs).toBeUndefined()
    await table.bulkPut(old!.puts)
    const u = (await updateSegments(tables, 4, old!.refs, { g: 101, terms: second, docs: docsOf(101, 200) }, undefined))!
    expect(u.refs.map((r) => r.g)).toEqual([1])
    await dropSegments(tables, 4, u.drop)
    await table.bulkPut(u.puts)
    await dirs.put(u.dir!)
    expect(u.docs).toBeUndefined()
    expect(await lists.count()).toBe(0)
    const dir = readDir((await dirs.get([4, 1])) as TextDirRow)
    expect(dir.terms).toEqual([...new Set([...first.keys(), ...second.keys()])].sort())
    for (const term of dir.terms) {
      const both = [first.get(term), second.get(term)].filter((l): l is PostingList => l !== undefined)
      expect(plain(mergeLists(await segmentLists(table, 4, u.refs, term, () => dir))), term).toEqual(plain(mergeLists(both)))
    }
    db.close()
  })
})
