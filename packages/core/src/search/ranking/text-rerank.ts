import type { EngramDb } from '../../catalog/schema.js'
import type { Hit } from '../types.js'
import { compareCandidates, topCandidates, type Candidate, type PostingFilter } from './bm25.js'
import { resolveHits, type CacheAt } from './hit-text.js'
import { recordIdOf } from '../index/index-rows.js'
import { proximityShare, PROXIMITY_WEIGHT } from './proximity.js'
import type { SearchEngine } from '../types.js'
import { textCandidates } from './text-query.js'
import { mixVariants, variantTerms } from '../analysis/word-variants.js'
import { queryTimeWindow, type TimeWindow } from '../analysis/time-expressions.js'
import { boostTimeWindow, TIME_DEPTH, withoutTimeTerms } from './time-boost.js'

/** Whether derived word forms of the query's words are searched too. */
export const VARIANTS = true

/** Whether a query naming a time ("in May", "last week") lifts what was written then. */
export const TIME = true

/** Whether candidates whose text holds query terms side by side move up. */
export const PROXIMITY = true
/**
 * The proximity bonus applies to this many of the best BM25 candidates, the
 * same for every `limit`: the bonus only raises scores, so these stay above
 * the rest, and a search with a small limit returns a prefix of the same
 * search with a large one.
 */
export const RERANK_WINDOW = 30

/**
 * Full-text candidates for the query's analyzed `tokens`, best `depth` first:
 * BM25 from the index (with derived word forms), the time window the query
 * names against `now` (or the `window` given: an anchored time the caller
 * resolved; its words taken out of the terms), then a proximity
 * bonus above it. Records it loads are added to `loaded` (by `kind:id`) so
 * the caller need not read them again. Runs inside the caller's read
 * transaction. With a `memo`, BM25 lists ranked before (by a search from memory that
 * then needed a read) are reused while the index state is unchanged.
 */
export async function rerankText(
  db: EngramDb,
  engine: SearchEngine,
  projectId: string,
  query: string,
  tokens: readonly string[],
  filter: PostingFilter,
  depth: number,
  loaded?: Map<string, Hit>,
  now?: number,
  cached?: CacheAt,
  window?: TimeWindow,
  memo?: CandidateMemo,
): Promise<Candidate[]> {
  const when = window ?? (TIME && now !== undefined ? queryTimeWindow(query, now) : undefined)
  if (when) {
    tokens = withoutTimeTerms(engine.analyzer, tokens, when)
    query = query.replace(when.text, ' ')
  }
  // A dated query weighs a fixed, deeper list, so its window can lift a candidate from far down.
  const deep = Math.max(depth, RERANK_WINDOW, when ? TIME_DEPTH : 0)
  const variants = VARIANTS ? variantTerms(engine.analyzer, query, new Set(tokens)) : []
  // Both queries at once: their block and row reads share the round trips.
  const [exact, derived] = await Promise.all([
    candidatesOf(engine, projectId, tokens, filter, deep, memo),
    variants.length > 0 ? candidatesOf(engine, projectId, variants, filter, deep, memo) : undefined,
  ])
  let ranked = derived ? topCandidates(mixVariants(exact, derived), deep) : exact
  if (when) ranked = boostTimeWindow(ranked, when)
  if (PROXIMITY && tokens.length >= 2 && ranked.length > 1) {
    const window = ranked.slice(0, RERANK_WINDOW)
    // The records of every candidate returned, not only the window's: one read instead of two in a row.
    const found = await resolveHits(db, projectId, ranked.slice(0, Math.max(depth, RERANK_WINDOW)), cached)
    for (const h of found) loaded?.set(`${h.kind}:${h.id}`, h)
    const texts = new Map(found.map((h) => [`${h.kind}:${h.id}`, h.text]))
    const boosted = window.map((c) => {
      const text = texts.get(`${c.kind}:${recordIdOf(c.docId, c.kind)}`)
      return text === undefined ? c : { ...c, score: c.score * (1 + PROXIMITY_WEIGHT * proximityShare(engine.analyzer, tokens, text)) }
    })
    ranked = [...boosted.sort(compareCandidates), ...ranked.slice(RERANK_WINDOW)]
  }
  return ranked.slice(0, Math.max(depth, RERANK_WINDOW))
}

/** BM25 candidates one search ranked, by depth and terms, with the index state they were ranked on. */
export type CandidateMemo = Map<string, { epoch: number; blockEpoch: number; list: Candidate[] }>

/** The BM25 candidates of `tokens` (textCandidates), from `memo` when the same list was ranked on the same index state. */
async function candidatesOf(
  engine: SearchEngine,
  projectId: string,
  tokens: readonly string[],
  filter: PostingFilter,
  depth: number,
  memo: CandidateMemo | undefined,
): Promise<Candidate[]> {
  const key = `${depth}\u0001${tokens.join('\u0001')}`
  const { epoch, blockEpoch } = engine.state
  const known = memo?.get(key)
  if (known && known.epoch === epoch && known.blockEpoch === blockEpoch) return known.list
  const list = await textCandidates(engine, projectId, tokens, filter, depth)
  if (engine.state.epoch === epoch && engine.state.blockEpoch === blockEpoch) memo?.set(key, { epoch, blockEpoch, list })
  return list
}

/** Loads the records of ranked candidates, reusing those already `loaded`; hits in rank order with the final scores. */
export async function resolveRanked(
  db: EngramDb,
  projectId: string,
  ranked: readonly Candidate[],
  loaded: ReadonlyMap<string, Hit>,
  cached?: CacheAt,
): Promise<Hit[]> {
  const keyOf = (c: Candidate) => `${c.kind}:${recordIdOf(c.docId, c.kind)}`
  const missing = ranked.filter((c) => !loaded.has(keyOf(c)))
  const fresh = new Map((missing.length > 0 ? await resolveHits(db, projectId, missing, cached) : []).map((h) => [`${h.kind}:${h.id}`, h]))
  const out: Hit[] = []
  for (const c of ranked) {
    const h = loaded.get(keyOf(c)) ?? fresh.get(keyOf(c))
    if (h) out.push({ ...h, score: c.score, createdAt: c.at })
  }
  return out
}
