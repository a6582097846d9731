import type { HitKind } from './search.js'

/*
 * Rows of the search-index tables (schema.ts, "search index"). One row per
 * document holds its distinct terms in a multi-entry index (`*terms`), so the
 * postings of a term are one index range, and indexing a document is one
 * write request, not one per term. The row carries what scoring and filtering
 * need (term frequencies, length, kind, session, time).
 */

/** One term of one document, as scoring sees it (in memory). term = `${projectId}\u0001${token}`. */
export interface PostingRow { term: string; docId: string; tf: number; len: number; kind: HitKind; sid?: string; at: number }
/** One indexed document: its distinct term keys and their frequencies (parallel arrays). */
export interface SearchDocRow { docId: string; projectId: string; kind: HitKind; sessionId?: string; createdAt: number; len: number; terms: string[]; tfs: number[] }
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

/** The postings a document row contributes, one per distinct term. */
export function postingsOf(doc: SearchDocRow): PostingRow[] {
  return doc.terms.map((term, i) => {
    const row: PostingRow = { term, docId: doc.docId, tf: doc.tfs[i]!, len: doc.len, kind: doc.kind, at: doc.createdAt }
    if (doc.sessionId !== undefined) row.sid = doc.sessionId
    return row
  })
}

/** The posting of `term` in a document row (undefined when the document lacks it). */
export function postingIn(doc: SearchDocRow, term: string): PostingRow | undefined {
  const i = doc.terms.indexOf(term)
  if (i < 0) return undefined
  const row: PostingRow = { term, docId: doc.docId, tf: doc.tfs[i]!, len: doc.len, kind: doc.kind, at: doc.createdAt }
  if (doc.sessionId !== undefined) row.sid = doc.sessionId
  return row
}
