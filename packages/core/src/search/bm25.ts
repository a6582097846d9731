import type { PostingRow } from './index-rows.js'
import type { HitKind } from './search.js'

/** A ranked document before its text is loaded. */
export interface Candidate { docId: string; kind: HitKind; sid?: string; at: number; score: number }

/** Which postings a query may match. */
export interface PostingFilter { kinds?: ReadonlySet<HitKind>; sessionId?: string; excludeSessionId?: string }

/** BM25 term-frequency saturation. */
export const K1 = 1.2
/** BM25 length normalization. */
export const B = 0.75

/** Orders candidates: higher score, then newer, then by id (stable output). */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return b.score - a.score || b.at - a.at || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0)
}

/**
 * Scores documents with Okapi BM25 over the posting lists of the query terms
 * (one list per distinct term) and returns the best `k`, best first.
 */
export function rankBm25(lists: ReadonlyArray<ReadonlyMap<string, PostingRow>>, corpus: { docs: number; length: number }, filter: PostingFilter, k: number): Candidate[] {
  const scores = new Map<string, Candidate>()
  const avgLength = corpus.docs > 0 ? Math.max(1, corpus.length / corpus.docs) : 1
  for (const list of lists) {
    const df = list.size
    if (df === 0) continue
    const n = Math.max(corpus.docs, df)
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
    const lengthWeight = (K1 * B) / avgLength
    const constant = K1 * (1 - B)
    for (const row of list.values()) {
      if (filter.kinds !== undefined && !filter.kinds.has(row.kind)) continue
      if (filter.sessionId !== undefined && row.sid !== filter.sessionId) continue
      if (filter.excludeSessionId !== undefined && row.sid === filter.excludeSessionId) continue
      const weight = (idf * row.tf * (K1 + 1)) / (row.tf + constant + lengthWeight * row.len)
      const found = scores.get(row.docId)
      if (found) found.score += weight
      else {
        const candidate: Candidate = { docId: row.docId, kind: row.kind, at: row.at, score: weight }
        if (row.sid !== undefined) candidate.sid = row.sid
        scores.set(row.docId, candidate)
      }
    }
  }
  return topCandidates(scores.values(), k)
}

/** The best `k` candidates of an iterable, best first, without sorting them all. */
export function topCandidates(all: Iterable<Candidate>, k: number): Candidate[] {
  const top: Candidate[] = []
  for (const c of all) {
    if (top.length === k && compareCandidates(c, top[k - 1]!) >= 0) continue
    let at = top.length
    while (at > 0 && compareCandidates(c, top[at - 1]!) < 0) at--
    top.splice(at, 0, c)
    if (top.length > k) top.pop()
  }
  return top
}
