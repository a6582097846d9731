import type { Analyzer } from '../analysis/analyzer.js'
import { compareCandidates, type Candidate } from './bm25.js'
import type { TimeWindow } from '../analysis/time-expressions.js'

const DAY = 24 * 3600 * 1000
/** A candidate written inside the query's time window scores this much more (×(1 + weight)). */
export const TIME_WEIGHT = 1
/** How many BM25 candidates a dated query weighs: the window can lift one from deep in the list. */
export const TIME_DEPTH = 300
/** Events are told after they happen ("yesterday we…"): a window stretches this far past its end. */
export const TOLD_AFTER = 3 * DAY
/** …and this far before its start (plans, time zones). */
export const TOLD_BEFORE = DAY

/** Whether a record written at `at` may tell of something in `window`. */
export function inWindow(window: TimeWindow, at: number): boolean {
  return at >= window.from - TOLD_BEFORE && at < window.to + TOLD_AFTER
}

/**
 * Raises the candidates written inside the query's time window (with the
 * slack of {@link inWindow}) by {@link TIME_WEIGHT}; the others keep their
 * score. Returns them best first.
 */
export function boostTimeWindow(candidates: readonly Candidate[], window: TimeWindow, weight = TIME_WEIGHT): Candidate[] {
  return candidates.map((c) => (inWindow(window, c.at) ? { ...c, score: c.score * (1 + weight) } : c)).sort(compareCandidates)
}

/**
 * The query terms without those of its time expression ("may", "2026",
 * "month"): they name when, not what, and would match "may" the verb or
 * "last month" in any turn. Keeps every term when nothing else would be left.
 */
export function withoutTimeTerms(analyzer: Analyzer, terms: readonly string[], window: TimeWindow): string[] {
  const drop = new Set(analyzer.terms(window.text))
  const kept = terms.filter((t) => !drop.has(t))
  return kept.length > 0 ? kept : [...terms]
}
