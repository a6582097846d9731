import type { HitKind } from './search.js'

/*
 * Rows of the search-index tables (schema.ts, "search index"). Postings carry
 * what scoring and filtering need (length, kind, session, time), so a query
 * reads one key range per term and never looks documents up one by one.
 */

/** One term of one document. Key: [term+docId]; term = `${projectId}\u0001${token}`. */
export interface PostingRow { term: string; docId: string; tf: number; len: number; kind: HitKind; sid?: string; at: number }
/** One indexed document: what a removal needs to find its postings again. */
export interface SearchDocRow { docId: string; projectId: string; kind: HitKind; sessionId?: string; createdAt: number; len: number; tokens: string[] }
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
