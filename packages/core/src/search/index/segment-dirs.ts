import type { Table } from 'dexie'
import { TERM_SEPARATOR, type TextDirRow, type TextSegDocsRow, type TextSegRow } from './index-rows.js'
import { isContinuation } from './segment-codec.js'

/*
 * Directories and document lists of posting segments (index-rows.ts
 * `textDirs`, `textSegDocs`). A segment never changes once written
 * (compaction and purges write a new one), so both are written with it and
 * read once: then a query knows, without a read, whether a segment holds a
 * term and which row holds it, and the id and time of every document of it.
 */

/** The directory table (schema.ts declares it untyped). */
export type DirTable = Table<TextDirRow, [number, number]>
/** The table of segment document lists. */
export type SegDocsTable = Table<TextSegDocsRow, [number, number]>

/** The documents of a segment, as a merge collects them: numbers (increasing), ids and creation times, in the same order. */
export interface SegmentDocs {
  n: ArrayLike<number>
  d: readonly string[]
  a: ArrayLike<number>
}

/** A segment's directory in memory. */
export interface SegmentDir {
  /** Every term, in string order. */
  terms: string[]
  /** Position in `terms` of the first term of each row that starts one. */
  rowStarts: Uint32Array
  /** Positions of the terms whose postings take rows of their own (increasing). */
  split: Uint32Array
}

/** The directory row of segment `g` of project `q`, from its rows (in key order). */
export function dirRowOf(q: number, g: number, rows: readonly TextSegRow[]): TextDirRow {
  const starts: number[] = []
  const split: number[] = []
  const names: string[] = []
  let at = 0
  for (const row of rows) {
    if (isContinuation(row)) {
      // The term before goes on in this row: it takes rows of its own.
      if (split.at(-1) !== at - 1) split.push(at - 1)
      continue
    }
    starts.push(at)
    names.push(row.t)
    at += row.c.length
  }
  return { q, g, t: names.join(TERM_SEPARATOR), r: Uint32Array.from(starts), x: Uint32Array.from(split) }
}

/** A stored directory, ready for lookups. */
export function readDir(row: TextDirRow): SegmentDir {
  return { terms: row.t === '' ? [] : row.t.split(TERM_SEPARATOR), rowStarts: row.r, split: row.x }
}

/**
 * Where a segment holds `term`: the key of its (first) row, its place in the row, and whether its
 * postings go on in rows of their own; undefined when the segment lacks it.
 */
export function termPlace(dir: SegmentDir, q: number, g: number, term: string): { key: [number, number, string]; i: number; split: boolean } | undefined {
  const at = indexOf(dir.terms, term)
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
  return { key: [q, g, dir.terms[start]!], i: at - start, split: indexOf(dir.split, at) >= 0 }
}

/** Position of `value` in a sorted array, or -1. */
function indexOf<T extends string | number>(sorted: ArrayLike<T>, value: T): number {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = sorted[mid]!
    if (at === value) return mid
    if (at < value) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** The stored document list of segment `g` of project `q`. */
export function docsRowOf(q: number, g: number, docs: SegmentDocs): TextSegDocsRow {
  const ends = new Uint32Array(docs.d.length)
  let at = 0
  docs.d.forEach((id, i) => {
    at += id.length
    ends[i] = at
  })
  return { q, g, n: Uint32Array.from(docs.n), d: docs.d.join(''), o: ends, a: Float64Array.from(docs.a) }
}

/** The documents of a stored list, one id per document. */
export function docsOfRow(row: TextSegDocsRow | undefined): SegmentDocs | undefined {
  if (!row) return undefined
  const d: string[] = []
  for (let i = 0; i < row.o.length; i++) d.push(row.d.slice(i === 0 ? 0 : row.o[i - 1]!, row.o[i]!))
  return { n: row.n, d, a: row.a }
}

/** The id and time of document `n` in a stored list, when it is one of them. */
export function docIn(row: TextSegDocsRow, n: number): { d: string; a: number } | undefined {
  let lo = 0
  let hi = row.n.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = row.n[mid]!
    if (at === n) return { d: row.d.slice(mid === 0 ? 0 : row.o[mid - 1]!, row.o[mid]!), a: row.a[mid]! }
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
