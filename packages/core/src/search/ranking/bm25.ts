import type { HitKind } from '../search.js'

/** A ranked document before its text is loaded. */
export interface Candidate {
  docId: string
  kind: HitKind
  sid?: string
  at: number
  score: number /** Document length, when known from the text index. */
  len?: number
}

/** Which postings a query may match. */
export interface PostingFilter {
  kinds?: ReadonlySet<HitKind>
  sessionId?: string
  excludeSessionId?: string
}

/** BM25 term-frequency saturation. */
export const K1 = 1.2
/** BM25 length normalization. */
export const B = 0.75

/** Orders candidates: higher score, then newer, then by id (stable output). */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return b.score - a.score || b.at - a.at || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0)
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
