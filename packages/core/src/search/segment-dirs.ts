import type { Table } from 'dexie'
import { TERM_SEPARATOR, type TextDirRow, type TextSegRow } from './index-rows.js'

/*
 * Directories of posting segments (index-rows.ts `textDirs`). A segment never
 * changes once written (compaction and purges write a new one), so its
 * directory is written with it and read once: then a query knows, without a
 * read, whether a segment holds a term and which row holds it, and it knows
 * the id and time of every document of the segment.
 */

/** The directory table (schema.ts declares it untyped). */
export type DirTable = Table<TextDirRow, [number, number]>

/** The documents of a segment: numbers (increasing), ids and creation times, in the same order. */
export interface SegmentDocs {
  n: ArrayLike<number>
  d: readonly string[]
  a: ArrayLike<number>
}

/** A segment's directory in memory. */
export interface SegmentDir {
  /** Every term, in string order. */
  terms: string[]
  /** Position in `terms` of each row's first term. */
  rowStarts: Uint32Array
  /** The documents, when known. */
  docs?: { n: Uint32Array; d: string[]; a: Float64Array }
}

/** The directory row of segment `g` of project `q`, from its rows (in key order) and its documents when known. */
export function dirRowOf(q: number, g: number, rows: readonly TextSegRow[], docs: SegmentDocs | undefined): TextDirRow {
  const starts = new Uint32Array(rows.length)
  let at = 0
  rows.forEach((row, i) => {
    starts[i] = at
    at += row.c.length
  })
  const row: TextDirRow = { q, g, t: rows.map((r) => r.t).join(TERM_SEPARATOR), r: starts }
  if (docs) {
    row.n = Uint32Array.from(docs.n)
    row.d = [...docs.d]
    row.a = Float64Array.from(docs.a)
  }
  return row
}

/** A stored directory, ready for lookups. */
export function readDir(row: TextDirRow): SegmentDir {
  const dir: SegmentDir = { terms: row.t === '' ? [] : row.t.split(TERM_SEPARATOR), rowStarts: row.r }
  if (row.n && row.d && row.a) dir.docs = { n: row.n, d: row.d, a: row.a }
  return dir
}

/** Where a segment holds `term`: the key of its row and its place in the row; undefined when the segment lacks it. */
export function termPlace(dir: SegmentDir, q: number, g: number, term: string): { key: [number, number, string]; i: number } | undefined {
  const at = search(dir.terms, term)
  if (at < 0) return undefined
  // The row is the last one starting at or before the term.
  let lo = 0
  let hi = dir.rowStarts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (dir.rowStarts[mid]! <= at) lo = mid
    else hi = mid - 1
  }
  const start = dir.rowStarts[lo]!
  return { key: [q, g, dir.terms[start]!], i: at - start }
}

/** The id and time of document `n` of a segment, when its directory lists its documents and `n` is one of them. */
export function docIn(dir: SegmentDir, n: number): { d: string; a: number } | undefined {
  const docs = dir.docs
  if (!docs) return undefined
  let lo = 0
  let hi = docs.n.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = docs.n[mid]!
    if (at === n) return { d: docs.d[mid]!, a: docs.a[mid]! }
    if (at < n) lo = mid + 1
    else hi = mid - 1
  }
  return undefined
}

/**
 * The documents of segments merged into one (in segment order: their ranges are disjoint and
 * increasing), without `dead` ones; undefined when a part's documents are unknown.
 */
export function concatDocs(parts: ReadonlyArray<SegmentDocs | undefined>, dead: ReadonlySet<number> | undefined): SegmentDocs | undefined {
  if (parts.some((p) => p === undefined)) return undefined
  const n: number[] = []
  const d: string[] = []
  const a: number[] = []
  for (const part of parts as SegmentDocs[]) {
    for (let i = 0; i < part.n.length; i++) {
      if (dead?.has(part.n[i]!)) continue
      n.push(part.n[i]!)
      d.push(part.d[i]!)
      a.push(part.a[i]!)
    }
  }
  return { n, d, a }
}

/** The documents listed by a stored directory row, when it lists them. */
export function docsOfRow(row: TextDirRow | undefined): SegmentDocs | undefined {
  return row?.n && row.d && row.a ? { n: row.n, d: row.d, a: row.a } : undefined
}

function search(sorted: readonly string[], term: string): number {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = sorted[mid]!
    if (at === term) return mid
    if (at < term) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}
