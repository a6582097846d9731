import type { Analyzer } from '../analysis/analyzer.js'

/** Most a document's score grows when every query term pair occurs side by side in it. */
export const PROXIMITY_WEIGHT = 0.25
/** Two terms at most this many analyzed positions apart count as near. */
export const PROXIMITY_WINDOW = 3

/**
 * The share (0–1) of adjacent query term pairs that also occur near each
 * other (within {@link PROXIMITY_WINDOW} terms, either order) in `text`: a
 * phrase and proximity signal BM25's bag of words does not see.
 */
export function proximityShare(analyzer: Analyzer, queryTerms: readonly string[], text: string): number {
  if (queryTerms.length < 2) return 0
  const positions = new Map<string, number[]>()
  analyzer.terms(text).forEach((t, i) => {
    const list = positions.get(t)
    if (list) list.push(i)
    else positions.set(t, [i])
  })
  let near = 0
  for (let i = 0; i + 1 < queryTerms.length; i++) {
    const a = positions.get(queryTerms[i]!)
    const b = positions.get(queryTerms[i + 1]!)
    if (a && b && a.some((x) => b.some((y) => y !== x && Math.abs(y - x) <= PROXIMITY_WINDOW))) near++
  }
  return near / (queryTerms.length - 1)
}
