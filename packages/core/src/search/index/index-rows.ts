import type { HitKind } from '../types.js'

/*
 * Rows of the search-index tables (schema.ts, versions 2 and 5). The layout is a
 * small log-structured index inside IndexedDB:
 *
 * - `textDocs`: one row per indexed document (or per batch of documents of a
 *   bulk write, doc-batches.ts), keyed by a small integer (the
 *   store's auto-increment counter), never by the long document id. It holds
 *   the document id (indexed, for replace and remove), a small project number,
 *   the length, the creation time and the distinct terms with their
 *   frequencies. Writing a document is this one row: a "segment" of one.
 *   A removed document keeps a row of a few bytes, marked dead (`x: 1`),
 *   until the merger has taken it out of the posting blocks.
 * - `textBlocks`: per project and term, posting blocks made by the merger:
 *   `Uint8Array`s of delta-varint document numbers with frequency, kind and
 *   length. Documents numbered above the merged mark are the unmerged tail,
 *   which queries keep in memory.
 * - `textSegs`: posting segments of bulk writes (imports, `appendMany`): a
 *   batch merged in its own transaction, or a background merge of many
 *   documents, is one segment per project, its
 *   terms in order packed a few kilobytes of postings to a row (see
 *   segments.ts), so a batch writes a few hundred rows instead of one per
 *   term. Segments cover disjoint, increasing ranges of document numbers;
 *   the newest are compacted into one when they grow as large as the one
 *   before them, so a project keeps a handful.
 * - `textDirs`: per segment its directory: every term with the row that
 *   holds it. Queries load it once and then read only the rows of terms a
 *   segment holds (a derived word form the corpus lacks costs no read).
 * - `textSegDocs`: per segment its documents with their ids and times,
 *   loaded in the background after a project's first query: from then on
 *   results take ids from it rather than reading a row per result.
 * - `textCorpus`: per project its number, the document count and total
 *   length of its merged documents, and its segments.
 */

/** Kinds as stored in a posting (codes 0–3 in two bits, 4–7 past the largest tf: posting-codec.ts). */
export const KIND_CODES: readonly HitKind[] = ['message', 'fact', 'summary', 'passage', 'entity', 'relation', 'observation']

/** A document of the index: a segment until merged, then only what replace, remove and ranking need. */
export interface TextDocRow {
  /** Document number (auto-increment). */
  n?: number
  /** Project number (see {@link TextCorpusRow}). */
  q: number
  /** Document id `<kind>:<record id>`; absent once the document is dead. */
  d?: string
  /** Created at (epoch ms). */
  a: number
  /** Length in terms. */
  l: number
  /** Distinct terms, joined by {@link TERM_SEPARATOR}; `''` for a document merged as it was written (a bulk write), whose terms live in blocks only. */
  t: string
  /** Term frequencies, in the order of `t`; absent when every one is 1. */
  f?: Uint16Array
  /** Kind code (index into {@link KIND_CODES}). */
  k: number
  /** 1 when the document was removed or replaced; its postings may still be in blocks (queries skip them) until a merge purges its project. A dead row has no id and no terms. */
  x?: 1
}

/**
 * Documents of a bulk write, numbered one after the other, in one row (doc-batches.ts):
 * each array holds a field of {@link TextDocRow} per member, in document order.
 */
export interface TextBatchRow {
  /** The number of the batch's last document: its key (so the auto-increment counter passes every member). */
  n: number
  q: number
  /** Members: documents numbered `n - m + 1` to `n`. */
  m: number
  /** Members that still count as rows: live ones, and dead ones until a purge (indexed with `q`, so a project's documents can be counted). */
  c: number
  /**
   * Member ids, `''` for a removed member: in `i` (not indexed) with their hashes in `h` (multi-entry
   * indexed: a number costs IndexedDB a fraction of what a 40-character id does as an index key);
   * batches written before schema 8 keep them in `d`, indexed as a single row's id (doc-batches.ts `memberIds`).
   */
  i?: string[]
  /** The hash of each member id (doc-batches.ts `idHash`), `-1` for a removed member; absent in a batch found by `p`. */
  h?: number[]
  /** The prefix every member id shares, cut to a set length (batch-pack.ts `sharedPrefix`): the batch is found by it (indexed, schema 9) instead of by `h`. */
  p?: string
  /** Member ids of a batch written before schema 8 (multi-entry indexed). */
  d?: string[]
  a: Float64Array
  l: Uint32Array
  k: Uint8Array
  /** The members' terms, each member's as in {@link TextDocRow.t}, one after the other; `''` for a batch merged as it was written. */
  t: string
  /** End of each member's terms in `t` (absent with `t` empty). */
  te?: Uint32Array
  /** Terms of the members up to and including each (absent with `t` empty). */
  ti?: Uint32Array
  /** Term frequencies of every member's terms in order; absent when every one is 1. */
  f?: Uint16Array
  /** Positions of members removed after they were merged (their postings stay until a purge). */
  r?: number[]
  /** 1 while `r` is not empty (queries and merges find dead documents by it). */
  x?: 1
}

/** A block of postings of one term of one project. */
export interface TextBlockRow {
  q: number
  /** The term. */
  w: string
  /** 1, 2, … for full (sealed) blocks in document-number order; 0 for the open block that appends go to, last in order. */
  b: number
  /** Sealed blocks of the term before this one. */
  s: number
  /** Postings in the block. */
  c: number
  /** Last document number in the block (the next block's deltas start after it). */
  z: number
  /** Postings: varint(document number − previous), varint(tf × 4 + kind), varint(length). */
  p: Uint8Array
}

/** A project's number and the statistics of its merged, live documents. */
export interface TextCorpusRow {
  p: string
  q: number
  docs: number
  length: number
  /** The project's posting segments, in document order (absent: none). */
  s?: SegmentRef[]
}

/** A posting segment of a project: its number (its lowest document number) and its postings. */
export interface SegmentRef {
  g: number
  /** Postings in the segment (compaction compares sizes by it). */
  c: number
}

/** A row of a posting segment: consecutive terms (in string order) with their postings. */
export interface TextSegRow {
  q: number
  /** The segment number (see {@link SegmentRef}). */
  g: number
  /** The first term of the row: a term lives in the row with the greatest `w` not above it. */
  w: string
  /** The terms of the row, in order, joined by {@link TERM_SEPARATOR}. */
  t: string
  /** Postings per term. */
  c: Uint32Array
  /** End of each term's postings in `p` (the first starts at 0). */
  o: Uint32Array
  /** Postings of each term, as in a block ({@link TextBlockRow.p}), each term's deltas starting from 0. */
  p: Uint8Array
}

/**
 * The directory of a posting segment, written with it: its terms in the order of
 * its rows and where each row starts. Segments written before directories
 * existed have none (queries then look a term up by key range).
 */
export interface TextDirRow {
  q: number
  /** The segment number (see {@link SegmentRef}). */
  g: number
  /** Every term of the segment, in string order, joined by {@link TERM_SEPARATOR}. */
  t: string
  /** For each row of the segment that starts a term, the position in `t` of its first term. */
  r: Uint32Array
  /** Positions in `t` of the terms whose postings take rows of their own, increasing (segment-codec.ts). */
  x: Uint32Array
}

/**
 * The documents of a posting segment, written with it (absent when unknown: a
 * segment compacted from one written before this list existed).
 */
export interface TextSegDocsRow {
  q: number
  /** The segment number (see {@link SegmentRef}). */
  g: number
  /** Document numbers, increasing. */
  n: Uint32Array
  /** Their document ids, one after the other (ids may hold any character). */
  d: string
  /** End of each id in `d`. */
  o: Uint32Array
  /** Their creation times. */
  a: Float64Array
}

/** A stored embedding (unit length), beside the fields vector search filters on. */
export interface VectorRow {
  docId: string
  projectId: string
  kind: HitKind
  sid?: string
  at: number
  /** The unit vector: int8 components (times `scale`), or as embedded (rows written before int8, or `vectorPrecision: 'float32'`). */
  vector: Float32Array | Int8Array
  /** What an int8 component is worth. */
  scale?: number
}
/** A document waiting to be embedded, off the write path. */
export interface EmbedQueueRow {
  seq?: number
  docId: string
  projectId: string
  text: string
  attempts: number
  notBefore: number /** Created at, and the session, of the document (for its vector row). */
  at?: number
  sid?: string
}

/** Separates the terms in {@link TextDocRow.t} (analyzers never emit it). */
export const TERM_SEPARATOR = '\u0000'
/** The `meta` row holding the highest merged document number. */
export const MERGED_MARK_KEY = 'search.merged'

/** The record id inside a `<kind>:<id>` document id. */
export function recordIdOf(docId: string, kind: HitKind): string {
  return docId.slice(kind.length + 1)
}

/** The kind of a `<kind>:<id>` document id. */
export function kindOf(docId: string): HitKind {
  return docId.slice(0, docId.indexOf(':')) as HitKind
}

/** The kind code of a document id. */
export function kindCodeOf(docId: string): number {
  return Math.max(0, KIND_CODES.indexOf(kindOf(docId)))
}

/** The terms of a document row. */
export function termsOf(row: TextDocRow): string[] {
  return row.t === '' ? [] : row.t.split(TERM_SEPARATOR)
}

/** The frequency of the `i`-th term of a document row. */
export function tfAt(row: TextDocRow, i: number): number {
  return row.f ? row.f[i]! : 1
}
