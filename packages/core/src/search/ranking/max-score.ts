/**
 * Early termination for BM25 over long posting lists (the MaxScore idea,
 * term at a time). Terms are scored rarest first; once the documents scored
 * so far hold `keep` whose partial scores all exceed what every remaining
 * term could still add to a document (its weight is below idf × (k1 + 1)),
 * no unscored document can reach the best `keep`. The remaining, longer
 * lists then only add to documents already scored: found by galloping
 * through the list, not by scoring each of its postings.
 */

/** Relative slack on the bound: the comparison must never be decided by rounding. */
const SLACK = 1e-9

/** The `k`-th largest of `values[0..n)` (1-based `k`, at most `n`); reorders a copy, not `values`. */
export function kthLargest(values: Float64Array, n: number, k: number): number {
  const a = values.slice(0, n)
  let lo = 0
  let hi = n - 1
  const target = k - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!
    let i = lo
    let j = hi
    while (i <= j) {
      while (a[i]! > pivot) i++
      while (a[j]! < pivot) j--
      if (i <= j) {
        const t = a[i]!
        a[i] = a[j]!
        a[j] = t
        i++
        j--
      }
    }
    if (target <= j) hi = j
    else if (target >= i) lo = i
    else return a[target]!
  }
  return a[target]!
}

/** Whether documents not scored yet can be left out: `bound` (what they could still score) is below the `keep`-th partial score. */
export function canStopAdding(partial: Float64Array, count: number, keep: number, bound: number): boolean {
  if (count < keep || keep <= 0) return false
  return bound * (1 + SLACK) < kthLargest(partial, count, keep)
}

/**
 * The first index in `docs[from..end)` whose number is at least `n`
 * (`end` if none): exponential then binary search, so a walk over a few
 * documents skips most of a long list.
 */
export function gallop(docs: Uint32Array, from: number, end: number, n: number): number {
  let step = 1
  let lo = from
  let hi = from
  while (hi < end && docs[hi]! < n) {
    lo = hi + 1
    hi += step
    step *= 2
  }
  if (hi > end) hi = end
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (docs[mid]! < n) lo = mid + 1
    else hi = mid
  }
  return lo
}
