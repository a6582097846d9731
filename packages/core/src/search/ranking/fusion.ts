import { compareCandidates, topCandidates, type Candidate } from './bm25.js'

/** Reciprocal rank fusion constant (Cormack et al. 2009). */
export const RRF_K = 60
/** Weight of the recency boost, relative to a first place in one list. */
export const RECENCY_WEIGHT = 0.3
/** Age at which the recency boost halves (ms): 30 days. */
export const RECENCY_HALF_LIFE = 30 * 24 * 3600 * 1000

/**
 * Fuses ranked lists with reciprocal rank fusion plus a recency boost that
 * decays with age relative to the newest candidate (not the wall clock, so the
 * same memory ranks the same way tomorrow). Returns the best `k`.
 */
export function fuseRanked(lists: ReadonlyArray<readonly Candidate[]>, k: number): Candidate[] {
  const fused = new Map<string, Candidate>()
  let newest = -Infinity
  for (const list of lists) {
    list.forEach((c, rank) => {
      newest = Math.max(newest, c.at)
      const add = 1 / (RRF_K + rank + 1)
      const found = fused.get(c.docId)
      if (found) found.score += add
      else fused.set(c.docId, { ...c, score: add })
    })
  }
  for (const c of fused.values()) {
    c.score += (RECENCY_WEIGHT / (RRF_K + 1)) * 2 ** (-(newest - c.at) / RECENCY_HALF_LIFE)
  }
  return topCandidates(fused.values(), k).sort(compareCandidates)
}
