import type { HitKind } from './search.js'

/*
 * Rows of the search-index tables (schema.ts, "search index").
 *
 * - `searchDocs`: one row per document. Its primary key `[docId+len+at+sid]`
 *   carries what scoring and filtering need, and its distinct terms with their
 *   frequencies and length, `${term}\u0002${min(tf, TF_CAP)}${len in base 36}` (term =
 *   `${projectId}\u0001${token}`; plain strings, cheaper to index than array
 *   keys), form a multi-entry index: one term's documents of one frequency are
 *   ordered shortest first, so the best ones can be read without the rest.
 *   Indexing a document is one write request; the postings of a term are read
 *   as primary keys only (`getAllKeys` over one index range per frequency), so
 *   a query never clones documents to score them.
 * - `corpusStats`: document count and total length per project, written once
 *   per transaction.
 */

/** Term frequencies at or above this share one index range; their exact value is read from the row. */
export const TF_CAP = 9
/** The primary key of a document row: [docId, length, createdAt, sessionId or ''] */
export type DocKey = [string, number, number, string]
/** A stored document: its key fields, project, distinct terms as index entries (see {@link entryKey}) and their exact frequencies. */
export interface SearchDocRow {
  docId: string
  len: number
  at: number
  sid: string
  projectId: string
  terms: string[]
  tfs: number[]
}
/** One term of one document, as scoring sees it (in memory). */
export interface PostingRow {
  term: string
  docId: string
  tf: number
  len: number
  at: number
  sid?: string
}
/** Document count and total length of a project, for BM25's idf and average length. */
export interface CorpusStatsRow {
  projectId: string
  docs: number
  length: number
}
/** A stored embedding (unit length), beside the fields vector search filters on. */
export interface VectorRow {
  docId: string
  projectId: string
  kind: HitKind
  sid?: string
  at: number
  vector: Float32Array
}
/** A document waiting to be embedded, off the write path. */
export interface EmbedQueueRow {
  seq?: number
  docId: string
  projectId: string
  text: string
  attempts: number
  notBefore: number
}

/** The index key of a token in a project. */
export function termKey(projectId: string, token: string): string {
  return `${projectId}\u0001${token}`
}

/** Longest document length an index entry orders by (longer ones sort with it). */
export const MAX_ENTRY_LEN = 36 ** 4 - 1
const LEN_WIDTH = 4

/** The length part of an entry: fixed-width base 36, so entries of one frequency sort by length. */
function lenPart(len: number): string {
  return Math.min(Math.max(0, Math.floor(len)), MAX_ENTRY_LEN)
    .toString(36)
    .padStart(LEN_WIDTH, '0')
}

/**
 * The multi-entry index key of a term in a document: the term, its frequency
 * capped at TF_CAP (one digit) and the document length, so the documents of
 * one frequency come shortest (highest BM25 weight) first.
 */
export function entryKey(term: string, tf: number, len: number): string {
  return `${term}\u0002${Math.min(tf, TF_CAP)}${lenPart(len)}`
}

/** The term of an index entry. */
export function termOfEntry(entry: string): string {
  return entry.slice(0, -(2 + LEN_WIDTH))
}

/** Where `term` is in a document row's entries (−1 when absent). */
export function entryIndex(row: SearchDocRow, term: string): number {
  const n = term.length + 2 + LEN_WIDTH
  const prefix = `${term}\u0002`
  return row.terms.findIndex((e) => e.length === n && e.startsWith(prefix))
}

/** Bounds (inclusive) of every index entry of a term. */
export function termRange(term: string): [string, string] {
  return [`${term}\u0002`, `${term}\u0003`]
}

/** Bounds (inclusive) of the entries of a term with (capped) frequency `tf` and length in `[minLen, maxLen]`. */
export function bucketRange(term: string, tf: number, minLen = 0, maxLen = MAX_ENTRY_LEN): [string, string] {
  return [entryKey(term, tf, minLen), entryKey(term, tf, maxLen)]
}

/** The record id inside a `<kind>:<id>` document id. */
export function recordIdOf(docId: string, kind: HitKind): string {
  return docId.slice(kind.length + 1)
}

/** The posting of a document row's key for a term with frequency `tf`. */
export function postingOf(term: string, key: DocKey, tf: number): PostingRow {
  const p: PostingRow = { term, docId: key[0], tf, len: key[1], at: key[2] }
  if (key[3] !== '') p.sid = key[3]
  return p
}

/** The kind of a `<kind>:<id>` document id. */
export function kindOf(docId: string): HitKind {
  return docId.slice(0, docId.indexOf(':')) as HitKind
}
