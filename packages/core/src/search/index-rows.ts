import type { HitKind } from './search.js'

/*
 * Rows of the search-index tables (schema.ts, "search index").
 *
 * - `postings`: one small row per (term, document), keyed `[term+docId]`, so the
 *   postings of a term are one key range and one term of one document is one
 *   point read. The row carries what scoring and filtering need (term
 *   frequency, document length, time, session), so a query never loads
 *   documents to score them.
 * - `searchDocs`: one row per document with its distinct tokens and length, read
 *   only to remove or replace the document.
 * - `corpusStats`: document count and total length per project, written once
 *   per transaction.
 */

/** One term of one document. term = `${projectId}\u0001${token}`; the kind is the prefix of docId. */
export interface PostingRow { term: string; docId: string; tf: number; len: number; at: number; sid?: string }
/** One indexed document: what removing it needs (its tokens, for the posting keys, and its length) and what embedding it stores. */
export interface SearchDocRow { docId: string; projectId: string; tokens: string[]; len: number; at: number; sid?: string }
/** Document count and total length of a project, for BM25's idf and average length. */
export interface CorpusStatsRow { projectId: string; docs: number; length: number }
/** A stored embedding (unit length), beside the fields vector search filters on. */
export interface VectorRow { docId: string; projectId: string; kind: HitKind; sid?: string; at: number; vector: Float32Array }
/** A document waiting to be embedded, off the write path. */
export interface EmbedQueueRow { seq?: number; docId: string; projectId: string; text: string; attempts: number; notBefore: number }

/** The index key of a token in a project. */
export function termKey(projectId: string, token: string): string {
  return `${projectId}\u0001${token}`
}

/** The record id inside a `<kind>:<id>` document id. */
export function recordIdOf(docId: string, kind: HitKind): string {
  return docId.slice(kind.length + 1)
}

/** The kind of a `<kind>:<id>` document id. */
export function kindOf(docId: string): HitKind {
  return docId.slice(0, docId.indexOf(':')) as HitKind
}
