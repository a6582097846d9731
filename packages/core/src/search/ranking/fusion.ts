import { compareCandidates, topCandidates, type Candidate } from './bm25.js'

/**
 * How hybrid search weighs its two lists, tuned on the recall fixtures' tuning
 * sets (docs/search-and-context.md): the text list, with every ranking layer
 * above BM25, keeps its scores; the vector list adds at most `vectorWeight`
 * of the best text score, for what shares no word with the query.
 */
export const HYBRID = {
  /** The most a vector match adds, as a share of the best text score. */
  vectorWeight: 0.7,
  /** Queries of at most this many analyzed terms, with no question word, skip the vector list (keyword lookups). */
  keywordTerms: 2,
}

/**
 * Fuses the text list (BM25 and its ranking layers: scores on one scale) with
 * the vector list (cosine similarities). Each candidate keeps its text score
 * and gains `weight × best text score × v`, where v rises linearly from 0 at
 * the lowest similarity of the vector list to 1 at the highest: the text
 * scores stay meaningful for what reads them after (adjacent turns, the
 * context builder's score cliff), and a candidate only the vector list finds
 * ranks by its similarity alone. Returns the best `k`, best first.
 */
export function fuseScores(text: readonly Candidate[], vector: readonly Candidate[], k: number, weight = HYBRID.vectorWeight): Candidate[] {
  const fused = new Map<string, Candidate>(text.map((c) => [c.docId, { ...c }]))
  const best = text.reduce((m, c) => Math.max(m, c.score), 0) || 1
  let high = -Infinity
  let low = Infinity
  for (const c of vector) {
    high = Math.max(high, c.score)
    low = Math.min(low, c.score)
  }
  const span = high - low
  for (const c of vector) {
    const v = span > 0 ? (c.score - low) / span : 1
    const add = weight * best * v
    const found = fused.get(c.docId)
    if (found) found.score += add
    else fused.set(c.docId, { ...c, score: add })
  }
  return topCandidates(fused.values(), k).sort(compareCandidates)
}
