import type { Candidate, PostingFilter } from './bm25.js'
import { entryIndex, kindOf, MAX_ENTRY_LEN, postingOf, type DocKey } from './index-rows.js'
import type { SearchEngine } from './text-index.js'
import { keyOfCandidate, kthScore, LOOKUP_COST, passes, readPostings, WINDOWED_TF, type QueryTerm } from './text-query.js'

/** BM25 weight of a term at frequency `tf` in a document of length `len`. */
export type TermWeight = (q: QueryTerm, tf: number, len: number) => number

/**
 * Scores long posting lists without reading them whole (threshold algorithm
 * over length-ordered index entries). `scores` holds the candidates of the
 * terms already read in full; `terms` are the rest. Each round reads, for
 * every term, the documents of the next length window (shortest first, where
 * BM25 weights are highest; documents at higher frequencies, which are few,
 * whole in the first round),
 * so after it a document not yet seen in a term can gain at most the weight
 * of the window's end. Rounds stop once the `depth`-th best score so far beats
 * what an unseen document could still reach; candidates that can still make
 * the cut then get their missing terms from their document rows. The top
 * `depth` is the same as scoring every list in full (same summation order).
 */
export async function scoreBySortedAccess(
  engine: SearchEngine,
  terms: readonly QueryTerm[],
  scores: Map<string, Candidate>,
  filter: PostingFilter,
  depth: number,
  weight: TermWeight,
  avgLength: number,
): Promise<void> {
  const n = terms.length
  const parts = new Map<string, Float64Array>() // NaN: not known yet
  const partsOf = (docId: string): Float64Array => {
    let p = parts.get(docId)
    if (!p) parts.set(docId, (p = new Float64Array(n).fill(NaN)))
    return p
  }
  const ub = terms.map((q) => q.bound) // the most a term can still add to a document it was not seen in
  const contribute = (t: number, key: DocKey, tf: number) => {
    const docId = key[0]
    if (!scores.has(docId)) {
      const p = postingOf(terms[t]!.term, key, tf)
      if (!passes(p, filter)) return
      const c: Candidate = { docId, kind: kindOf(docId), at: p.at, len: p.len, score: 0 }
      if (p.sid !== undefined) c.sid = p.sid
      scores.set(docId, c)
    }
    partsOf(docId)[t] = weight(terms[t]!, tf, key[1])
  }
  terms.forEach((q, t) => {
    const list = engine.cache.list(q.term)
    if (!list) return
    for (const p of list.values()) contribute(t, [p.docId, p.len, p.at, p.sid ?? ''], p.tf)
    ub[t] = 0
  })

  const seen = terms.map(() => 0)
  // The first window reaches half the average length; later ones start narrow and widen by half each round.
  let lo = 0
  let hi = Math.max(1, Math.ceil(avgLength / 2))
  let span = Math.max(1, Math.ceil(avgLength / 8))
  for (let round = 0; ub.some((u) => u > 0); round++) {
    const open = terms.flatMap((_, t) => (ub[t]! > 0 ? [t] : []))
    const read = await Promise.all(open.map((t) => readPostings(engine, terms[t]!.term, lo, hi, round === 0)))
    open.forEach((t, j) => {
      for (const [key, tf] of read[j]!) contribute(t, key, tf)
      seen[t]! += read[j]!.length
      if (seen[t]! >= terms[t]!.df) {
        ub[t] = 0 // every posting read (df was counted in this read transaction or kept current by the cache)
        return
      }
      // Higher frequencies were read whole in round 0; the best weight left is WINDOWED_TF just past `hi`.
      ub[t] = hi >= MAX_ENTRY_LEN ? 0 : weight(terms[t]!, WINDOWED_TF, hi + 1)
    })
    lo = hi + 1
    hi = Math.min(MAX_ENTRY_LEN, lo + span - 1)
    span = Math.ceil(span * 1.5)
    const unseen = ub.reduce((a, b) => a + b, 0)
    if (kthScore(lowerBounds(scores, parts), depth) > unseen) break
  }

  // Candidates that can still make the top `depth` get their unknown terms from their rows.
  const lower = lowerBounds(scores, parts)
  const kth = kthScore(lower, depth)
  const missing: Candidate[] = []
  for (const c of scores.values()) {
    const p = parts.get(c.docId)
    let upper = lower.get(c.docId)!.score
    let unknown = false
    for (let t = 0; t < n; t++) {
      if ((p && !Number.isNaN(p[t]!)) || ub[t] === 0) continue // known, or every posting of t was read
      unknown = true
      upper += ub[t]!
    }
    if (unknown && upper >= kth) missing.push(c)
  }
  // A term whose unread postings are few next to the candidates missing it is read to the end instead.
  const finish = terms.flatMap((q, t) => {
    if (ub[t] === 0) return []
    const wanting = missing.reduce((m, c) => m + (Number.isNaN(parts.get(c.docId)?.[t] ?? NaN) ? 1 : 0), 0)
    return q.df - seen[t]! <= wanting * LOOKUP_COST ? [t] : []
  })
  if (finish.length > 0) {
    const read = await Promise.all(finish.map((t) => readPostings(engine, terms[t]!.term, lo, MAX_ENTRY_LEN, false)))
    finish.forEach((t, j) => {
      for (const [key, tf] of read[j]!) if (scores.has(key[0])) contribute(t, key, tf)
      ub[t] = 0
    })
    for (let j = missing.length - 1; j >= 0; j--) {
      const p = parts.get(missing[j]!.docId)
      if (terms.every((_, t) => ub[t] === 0 || (p !== undefined && !Number.isNaN(p[t]!)))) missing.splice(j, 1)
    }
  }
  const rows = missing.length > 0 ? await engine.t.searchDocs.bulkGet(missing.map(keyOfCandidate)) : []
  rows.forEach((row, j) => {
    const c = missing[j]!
    const p = partsOf(c.docId)
    for (let t = 0; t < n; t++) {
      if (!Number.isNaN(p[t]!)) continue
      const at = row ? entryIndex(row, terms[t]!.term) : -1
      p[t] = at >= 0 ? weight(terms[t]!, row!.tfs[at]!, row!.len) : 0
    }
  })
  // Final scores add the terms in query order, as a full scoring pass would (pruned ones stay below the cut).
  for (const c of scores.values()) {
    const p = parts.get(c.docId)
    if (!p) continue
    for (let t = 0; t < n; t++) if (!Number.isNaN(p[t]!)) c.score += p[t]!
  }
}

/** Scores with only the known parts added (a lower bound of each final score). */
function lowerBounds(scores: ReadonlyMap<string, Candidate>, parts: ReadonlyMap<string, Float64Array>): Map<string, Candidate> {
  const out = new Map<string, Candidate>()
  for (const c of scores.values()) {
    const p = parts.get(c.docId)
    let score = c.score
    if (p) for (let t = 0; t < p.length; t++) if (!Number.isNaN(p[t]!)) score += p[t]!
    out.set(c.docId, { ...c, score })
  }
  return out
}
