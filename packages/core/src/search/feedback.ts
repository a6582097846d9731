import type { Analyzer } from './analyzer.js'

/** How many of the best hits feed the expansion. */
export const FEEDBACK_DOCS = 5
/** Most expansion terms added to a query. */
export const FEEDBACK_TERMS = 8
/** Weight of the expansion query's scores beside the original's (RM3's 1 − λ). */
export const FEEDBACK_WEIGHT = 0.3
/** An expansion term must occur in at least this many feedback documents (one document's quirks are not the topic). */
export const FEEDBACK_MIN_DOCS = 2

/** A feedback document: its text and its score in the first ranking. */
export interface FeedbackDoc {
  text: string
  score: number
}

/**
 * Pseudo-relevance feedback (RM3-style): the words the best hits share,
 * weighted by how much of each hit they make up and how well the hit
 * scored — P(w|R) = Σ_d P(d) · tf(w, d) / |d|, P(d) the hit's share of the
 * feedback scores. Returns at most {@link FEEDBACK_TERMS} analyzed terms the
 * query does not hold and at least {@link FEEDBACK_MIN_DOCS} hits share,
 * best first (ties by term, so the same hits give the same terms).
 */
export function feedbackTerms(analyzer: Analyzer, docs: readonly FeedbackDoc[], queryTerms: ReadonlySet<string>): string[] {
  const used = docs.slice(0, FEEDBACK_DOCS).filter((d) => d.score > 0)
  const total = used.reduce((sum, d) => sum + d.score, 0)
  if (total <= 0) return []
  const weight = new Map<string, number>()
  const seenIn = new Map<string, number>()
  for (const d of used) {
    const terms = analyzer.terms(d.text)
    if (terms.length === 0) continue
    const counts = new Map<string, number>()
    for (const t of terms) if (!queryTerms.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1)
    for (const [t, tf] of counts) {
      weight.set(t, (weight.get(t) ?? 0) + (d.score / total) * (tf / terms.length))
      seenIn.set(t, (seenIn.get(t) ?? 0) + 1)
    }
  }
  return [...weight]
    .filter(([t]) => (seenIn.get(t) ?? 0) >= FEEDBACK_MIN_DOCS)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, FEEDBACK_TERMS)
    .map(([t]) => t)
}
