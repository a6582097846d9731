import { Dexie, type Table } from 'dexie'
import { maxKey } from '../../store/keys.js'
import type { MetaRow } from '../../store/rows.js'
import type { DeadDoc, MergeResult } from './index-state.js'
import {
  MERGED_MARK_KEY,
  termsOf,
  tfAt,
  type TextBatchRow,
  type TextBlockRow,
  type TextCorpusRow,
  type TextDirRow,
  type TextDocRow,
  type TextSegDocsRow,
  type TextSegRow,
} from './index-rows.js'
import { packMerged } from './batch-pack.js'
import { batchOf, expandRows, firstOf, rewriteBatches, settle, type StoredDocRow } from './doc-batches.js'
import { decodeBlocks, PostingWriter } from './posting-codec.js'
import { collectSegments } from './segment-collect.js'
import type { DirTable, SegDocsTable } from './segment-dirs.js'
import { dropSegments, updateSegments, type FreshSegment, type SegmentTable, type SegmentTables, type SegmentUpdate } from './segments.js'

// The parts of a bulk write the text index takes from this chunk, which loads in the background as the store opens.
export { collectSegments }
export { batchRowsOf, docsByIds } from './batch-pack.js'

/** The tables a merge reads and writes (the store's, or an upgrade transaction's). */
export interface MergeTables {
  textDocs: Table<StoredDocRow, number>
  textBlocks: Table<TextBlockRow, [number, string, number]>
  textCorpus: Table<TextCorpusRow, string>
  meta: Table<MetaRow, string>
  /** Absent in the schema upgrades before segments existed. */
  textSegs?: SegmentTable
  /** Absent in the schema upgrades before segment directories existed (as is `textSegDocs`). */
  textDirs?: DirTable
  textSegDocs?: SegDocsTable
}

/** Postings per block: a block stays a few kilobytes, so appending rewrites little. */
export const BLOCK_POSTINGS = 1024

/** Dead documents in a project that make a merge rewrite its blocks without them (at least; also 1/16 of its documents). */
export const PURGE_AT = 64

/** A merge's outcome; `more` when the tail held more documents than the batch. */
export interface MergeOutcome extends MergeResult {
  more: boolean
}

interface Adds {
  q: number
  w: string
  docs: number[]
  tfs: number[]
  kinds: number[]
  lens: number[]
}

/**
 * Folds the unmerged tail (documents numbered above the merged mark, at most
 * `limit` of them) into the posting blocks of their terms and takes dead
 * documents out of the blocks they are in, inside the caller's read-write
 * transaction. Appending touches only the open block of a term; a project
 * with many dead documents has all its blocks rewritten without them. Corpus statistics and the mark move with
 * the blocks, so the index is consistent after every merge. A tail of
 * `segmentAt` live documents or more (0 for a bulk write merged in its own
 * transaction) becomes one new posting segment per project instead
 * (segments.ts): a few rows rather than one per term. `collected`: the postings of `added`
 * collected by the caller ({@link collectSegments}), used when they are all the new segments hold.
 * `pack`: the merged single rows become batch rows without terms (batch-pack.ts `packMerged`), as the store's merger asks.
 */
export async function mergeTail(
  t: MergeTables,
  limit = Infinity,
  added: readonly TextDocRow[] = [],
  purgeAt = PURGE_AT,
  record: readonly DeadDoc[] = [],
  segmentAt = Infinity,
  collected?: ReadonlyMap<number, FreshSegment>,
  pack = false,
): Promise<MergeOutcome> {
  const [markRow, corpusRows] = await Promise.all([t.meta.get(MERGED_MARK_KEY), t.textCorpus.toArray()])
  const mark = typeof markRow?.value === 'number' ? markRow.value : 0
  // Rows the caller just added (the highest numbers) need not be read back.
  const below = added.length > 0 ? added[0]!.n! : Infinity
  const tailQuery = Number.isFinite(below) ? t.textDocs.where(':id').between(mark, below, false, false) : t.textDocs.where(':id').above(mark)
  const [storedRows, markerRows] = await Promise.all([
    Number.isFinite(limit) ? tailQuery.limit(limit).toArray() : tailQuery.toArray(),
    t.textDocs.where('x').equals(1).toArray(),
  ])
  // At most `limit` documents (a batch row is taken whole), so a merge never holds the store long.
  let stored = expandRows(storedRows)
  let more = Number.isFinite(limit) && storedRows.length === limit
  if (stored.length > limit) {
    let end = limit
    while (end < stored.length && batchOf(stored[end]!) !== undefined && batchOf(stored[end]!) === batchOf(stored[end - 1]!)) end++
    more ||= end < stored.length
    stored = stored.slice(0, end)
  }
  const markers = expandRows(markerRows).filter((row) => row.x === 1)
  // Dead documents the caller knows of that have no marker yet (their rows were deleted).
  const known = new Set(markers.map((row) => row.n!))
  const fresh = record.filter((d) => d.n <= mark && !known.has(d.n)).map((d): TextDocRow => ({ n: d.n, q: d.q, a: 0, l: d.l, t: '', k: 0, x: 1 }))
  const deadRows = [...markers, ...fresh]
  const tail = added.length > 0 ? [...stored, ...added] : stored
  const newMark = tail.length > 0 ? tail[tail.length - 1]!.n! : mark
  const byQ = new Map<number, TextCorpusRow>()
  for (const row of corpusRows) byQ.set(row.q, { ...row })

  // Per project, then per term: no key is built per posting (a bulk write adds millions).
  const byProject = new Map<number, Map<string, Adds>>()
  const merged: number[] = []
  // A bulk write's postings become a new segment of each project (with a corpus row); the rest go to blocks.
  let live = 0
  for (const row of tail) if (row.x === undefined && row.d !== undefined) live++
  const toSegments = t.textSegs !== undefined && live > 0 && live >= segmentAt
  const segmentRowsOf: TextDocRow[] = []
  for (const row of tail) {
    if (row.x !== undefined || row.d === undefined) continue
    merged.push(row.n!)
    const c = byQ.get(row.q)
    if (c) {
      c.docs++
      c.length += row.l
    }
    if (toSegments && c) {
      segmentRowsOf.push(row)
      continue
    }
    let terms = byProject.get(row.q)
    if (!terms) byProject.set(row.q, (terms = new Map()))
    const words = termsOf(row)
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!
      let a = terms.get(w)
      if (!a) terms.set(w, (a = { q: row.q, w, docs: [], tfs: [], kinds: [], lens: [] }))
      a.docs.push(row.n!)
      a.tfs.push(tfAt(row, i))
      a.kinds.push(row.k)
      a.lens.push(row.l)
    }
  }
  // The caller may have collected the postings of exactly these rows already (while IndexedDB wrote them).
  const precollected = collected !== undefined && segmentRowsOf.length === added.length && segmentRowsOf.every((row, i) => row === added[i])
  const freshSegments = precollected ? collected : segmentRowsOf.length > 0 ? collectSegments(segmentRowsOf) : new Map<number, FreshSegment>()
  const adds = new Map<string, Adds>()
  for (const terms of byProject.values()) for (const a of terms.values()) adds.set(`${a.q}\u0001${a.w}`, a)
  // Dead documents: a dead row keeps only its number, project and length (a delete writes next to
  // nothing, so it works on a full disk too). Those of the tail were never in a block and just go.
  // Merged ones stay in their blocks, skipped by queries, until a project has enough of them to be
  // worth rewriting all its blocks; then they leave the blocks and the statistics together.
  const purged: number[] = []
  const dropRows: number[] = []
  const deadByQ = new Map<number, TextDocRow[]>()
  for (const row of deadRows) {
    if (row.n! > newMark) continue // a dead document of the tail beyond this batch: a later merge drops it
    if (row.n! > mark) {
      dropRows.push(row.n!)
      continue
    }
    const list = deadByQ.get(row.q)
    if (list) list.push(row)
    else deadByQ.set(row.q, [row])
  }
  const purgeQs = new Set<number>()
  const deadSet = new Set<number>()
  for (const [q, rows] of deadByQ) {
    const c = byQ.get(q)
    if (rows.length < Math.max(purgeAt, (c?.docs ?? 0) / 16)) continue
    purgeQs.add(q)
    for (const row of rows) {
      deadSet.add(row.n!)
      purged.push(row.n!)
      dropRows.push(row.n!)
      if (c) {
        c.docs = Math.max(0, c.docs - 1)
        c.length = Math.max(0, c.length - row.l)
      }
    }
  }
  const purgeByTerm = new Map<string, ReadonlySet<number>>()
  if (purgeQs.size > 0) {
    const keysOfQ = await Promise.all(
      [...purgeQs].map((q) => t.textBlocks.where('[q+w+b]').between([q, Dexie.minKey, Dexie.minKey], [q, maxKey(), maxKey()]).primaryKeys()),
    )
    for (const keys of keysOfQ) for (const [q, w] of keys) purgeByTerm.set(`${q}\u0001${w}`, deadSet)
  }

  const segments = await segmentUpdates(t.textSegs ? segmentTables(t) : undefined, byQ, freshSegments, purgeQs, deadSet)
  const keys = new Set([...adds.keys(), ...purgeByTerm.keys()])
  const split = (key: string): [number, string] => {
    const at = key.indexOf('\u0001')
    return [Number(key.slice(0, at)), key.slice(at + 1)]
  }
  const whole: string[] = []
  const appendOnly: string[] = []
  for (const key of keys) (purgeByTerm.has(key) ? whole : appendOnly).push(key)
  // Appending needs only each term's open block: one point read per term, all in one round trip.
  const [wholeBlocks, openBlocks] = await Promise.all([
    Promise.all(
      whole.map((key) => {
        const [q, w] = split(key)
        return t.textBlocks.where('[q+w+b]').between([q, w, Dexie.minKey], [q, w, maxKey()]).toArray()
      }),
    ),
    readOpenBlocks(t, appendOnly.map(split), new Set(corpusRows.filter((row) => row.docs === 0).map((row) => row.q))),
  ])

  const puts: TextBlockRow[] = []
  const deletes: Array<[number, string, number]> = []
  whole.forEach((key, i) => {
    const [q, w] = split(key)
    const blocks = inTermOrder(wholeBlocks[i]!)
    const dead = purgeByTerm.get(key)!
    const list = decodeBlocks(blocks)
    const add = adds.get(key)
    let hit = false
    for (let j = 0; j < list.count && !hit; j++) hit = dead.has(list.docs[j]!)
    if (!hit && !add) return // a term of a purged project without dead postings stays as it is
    const out = new BlockBuilder(q, w, undefined)
    for (let j = 0; j < list.count; j++) if (!dead.has(list.docs[j]!)) out.add(list.docs[j]!, list.tfs[j]!, list.kinds[j]!, list.lens[j]!)
    if (add) for (let j = 0; j < add.docs.length; j++) out.add(add.docs[j]!, add.tfs[j]!, add.kinds[j]!, add.lens[j]!)
    const rows = out.finish()
    puts.push(...rows)
    const kept = new Set(rows.map((row) => row.b))
    for (const b of blocks) if (!kept.has(b.b)) deletes.push([q, w, b.b])
  })
  appendOnly.forEach((key, i) => {
    const [q, w] = split(key)
    const add = adds.get(key)!
    const out = new BlockBuilder(q, w, openBlocks[i])
    for (let j = 0; j < add.docs.length; j++) out.add(add.docs[j]!, add.tfs[j]!, add.kinds[j]!, add.lens[j]!)
    puts.push(...out.finish())
  })

  const purgedSet = new Set(purged)
  const toRecord = fresh.filter((row) => !purgedSet.has(row.n!))
  const corpus = [...byQ.values()].filter((row, i) => row.docs !== corpusRows[i]!.docs || row.length !== corpusRows[i]!.length || row.s !== corpusRows[i]!.s)
  // A compacted segment keeps the number of its first part: its old rows go before the new ones are written.
  if (t.textSegs) await Promise.all([...segments].map(([q, u]) => dropSegments(segmentTables(t), q, u.drop)))
  const segmentPuts: TextSegRow[] = []
  const dirPuts: TextDirRow[] = []
  const docsPuts: TextSegDocsRow[] = []
  for (const u of segments.values()) {
    segmentPuts.push(...u.puts)
    if (u.dir) dirPuts.push(u.dir)
    if (u.docs) docsPuts.push(u.docs)
  }
  // Terms given postings in blocks, per project (queries keep the set of terms that have blocks).
  const blockTerms = new Map<number, string[]>()
  for (const a of adds.values()) {
    const list = blockTerms.get(a.q)
    if (list) list.push(a.w)
    else blockTerms.set(a.q, [a.w])
  }
  // The merged single rows of the tail become batch rows without terms (batch-pack.ts `packMerged`); dead rows are dropped below.
  const packed = pack ? packMerged(storedRows.filter((row) => row.n! <= newMark)) : { puts: [], deletes: [] }
  await Promise.all([
    packed.deletes.length > 0 ? t.textDocs.bulkDelete(packed.deletes) : undefined,
    packed.puts.length > 0 ? t.textDocs.bulkPut(packed.puts) : undefined,
    segmentPuts.length > 0 ? t.textSegs!.bulkPut(segmentPuts) : undefined,
    dirPuts.length > 0 ? t.textDirs!.bulkPut(dirPuts) : undefined,
    docsPuts.length > 0 ? t.textSegDocs!.bulkPut(docsPuts) : undefined,
    puts.length > 0 ? t.textBlocks.bulkPut(puts) : undefined,
    deletes.length > 0 ? t.textBlocks.bulkDelete(deletes) : undefined,
    dropDocRows(t, dropRows, deadRows),
    corpus.length > 0 ? t.textCorpus.bulkPut(corpus) : undefined,
    toRecord.length > 0 ? t.textDocs.bulkPut(toRecord) : undefined,
    newMark !== mark ? t.meta.put({ key: MERGED_MARK_KEY, value: newMark }) : undefined,
  ])
  // Dead documents the caller listed whose removal was stored already (members of batch rows) count as recorded too.
  const recorded = [...fresh.map((row) => row.n!), ...record.filter((d) => known.has(d.n)).map((d) => d.n)]
  return { mark: newMark, merged, purged, recorded, corpus, blockTerms, more }
}

/** A batch without the dead members numbered `ns` (a purge took their postings out). */
export function withoutDead(row: TextBatchRow, ns: ReadonlySet<number>): TextBatchRow | undefined {
  const first = firstOf(row)
  const r = (row.r ?? []).filter((i) => !ns.has(first + i))
  return settle({ ...row, r, c: row.c - ((row.r?.length ?? 0) - r.length) })
}

/** Deletes the rows of documents `ns`: single rows go; members of batch rows (among `dead`) leave their batches. */
function dropDocRows(t: MergeTables, ns: readonly number[], dead: readonly TextDocRow[]): Promise<unknown> | undefined {
  if (ns.length === 0) return undefined
  const drop = new Set(ns)
  const members = dead.filter((row) => drop.has(row.n!) && batchOf(row) !== undefined)
  for (const row of members) drop.delete(row.n!)
  return Promise.all([
    drop.size > 0 ? t.textDocs.bulkDelete([...drop]) : undefined,
    members.length > 0 ? rewriteBatches(t.textDocs, members, new Map(), withoutDead) : undefined,
  ])
}

/** The segment tables of a merge's tables (which has segments). */
function segmentTables(t: MergeTables): SegmentTables {
  return { textSegs: t.textSegs!, textDirs: t.textDirs, textSegDocs: t.textSegDocs }
}

/** Adds the fresh segments and purges dead documents from the segments of purged projects; corpus rows get their new segment lists. */
async function segmentUpdates(
  table: SegmentTables | undefined,
  byQ: Map<number, TextCorpusRow>,
  fresh: ReadonlyMap<number, FreshSegment>,
  purgeQs: ReadonlySet<number>,
  dead: ReadonlySet<number>,
): Promise<Map<number, SegmentUpdate>> {
  const out = new Map<number, SegmentUpdate>()
  if (!table) return out
  const qs = [...new Set([...fresh.keys(), ...[...purgeQs].filter((q) => (byQ.get(q)?.s?.length ?? 0) > 0)])]
  const updates = await Promise.all(qs.map((q) => updateSegments(table, q, byQ.get(q)?.s ?? [], fresh.get(q), purgeQs.has(q) ? dead : undefined)))
  qs.forEach((q, i) => {
    const u = updates[i]
    const row = byQ.get(q)
    if (!u || !row) return
    out.set(q, u)
    if (u.refs.length > 0) row.s = u.refs
    else delete row.s
  })
  return out
}

/** The open blocks of terms; a project with no merged documents has no blocks, so nothing is read for it. */
async function readOpenBlocks(t: MergeTables, terms: ReadonlyArray<[number, string]>, empty: ReadonlySet<number>): Promise<Array<TextBlockRow | undefined>> {
  const out = new Array<TextBlockRow | undefined>(terms.length)
  const wanted = terms.flatMap(([q], i) => (empty.has(q) ? [] : [i]))
  if (wanted.length === 0) return out
  const found = await t.textBlocks.bulkGet(wanted.map((i) => [terms[i]![0], terms[i]![1], OPEN_BLOCK] as [number, string, number]))
  wanted.forEach((i, j) => {
    out[i] = found[j]
  })
  return out
}

/** The block number of a term's open block, the one appends go to; full blocks are sealed as 1, 2, … */
export const OPEN_BLOCK = 0

/** A term's blocks in document order: sealed ones by number, then the open one. */
export function inTermOrder<T extends { b: number }>(blocks: readonly T[]): T[] {
  return [...blocks].sort((x, y) => (x.b === OPEN_BLOCK ? 1 : y.b === OPEN_BLOCK ? -1 : x.b - y.b))
}

/**
 * Writes postings of one term, continuing its open block when given: a full
 * open block is sealed under the next number and a new open block started.
 */
class BlockBuilder {
  private readonly rows: TextBlockRow[] = []
  private writer: PostingWriter
  private sealed: number

  constructor(
    private readonly q: number,
    private readonly w: string,
    open: TextBlockRow | undefined,
  ) {
    this.sealed = open?.s ?? 0
    this.writer = open ? PostingWriter.from(open.p, open.c, open.z) : new PostingWriter(0)
  }

  add(doc: number, tf: number, kind: number, len: number): void {
    if (this.writer.count >= BLOCK_POSTINGS) {
      this.rows.push(this.row(++this.sealed))
      this.writer = new PostingWriter(this.writer.last)
    }
    this.writer.add(doc, tf, kind, len)
  }

  private row(b: number): TextBlockRow {
    return { q: this.q, w: this.w, b, s: this.sealed, c: this.writer.count, z: this.writer.last, p: this.writer.finish() }
  }

  /** The sealed blocks written and the open block (when it holds postings). */
  finish(): TextBlockRow[] {
    if (this.writer.count > 0) this.rows.push(this.row(OPEN_BLOCK))
    return this.rows
  }
}
