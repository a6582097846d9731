import type { EngramDb } from '../../catalog/schema.js'
import type { CacheAt } from './hit-text.js'
import { liveTurns, turnWindows } from './turn-windows.js'
import type { Hit } from '../search.js'

/** Message hits (the best ones) whose adjacent turns join the ranking. */
export const ADJACENT_SEEDS = 3
/** An adjacent turn scores this share of its hit's score. */
export const ADJACENT_SHARE = 0.6
/** A turn two away (the answer after a follow-up question) scores this share of its hit's score. */
export const SECOND_SHARE = 0.4

const compareHits = (a: Hit, b: Hit) => b.score - a.score || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Conversation context as a ranking signal: the turns just before and after
 * the best message hits join the ranking at {@link ADJACENT_SHARE} of their
 * hit's score, those two turns away at {@link SECOND_SHARE} (an answer often
 * sits in the reply to the turn that matches the words, or after a
 * follow-up question). Returns the best `limit`, best first. Runs inside the
 * caller's read transaction.
 */
export async function withAdjacentTurns(db: EngramDb, projectId: string, hits: readonly Hit[], limit: number, cached?: CacheAt): Promise<Hit[]> {
  const seeds = hits.filter((h) => h.kind === 'message').slice(0, ADJACENT_SEEDS)
  if (seeds.length === 0) return hits.slice(0, limit)
  // The seeds' rows and the turns two either side of each (from the query cache when it holds them).
  const windows = await turnWindows(
    db,
    seeds.map((h) => h.id),
    cached,
  )
  const score = new Map(seeds.map((h) => [h.id, h.score]))
  const out = new Map(hits.map((h) => [`${h.kind}:${h.id}`, { ...h }]))
  for (const seed of seeds) {
    const window = windows.get(seed.id)
    if (!window) continue
    const r = window.row
    for (const m of liveTurns(window)) {
      const distance = Math.abs(m.seq - r.seq)
      if (m.projectId !== projectId || distance === 0) continue
      const s = (distance === 1 ? ADJACENT_SHARE : SECOND_SHARE) * score.get(r.id)!
      const found = out.get(`message:${m.id}`)
      if (found) found.score = Math.max(found.score, s)
      else out.set(`message:${m.id}`, { kind: 'message', id: m.id, projectId, sessionId: m.sessionId, text: m.content, score: s, createdAt: m.createdAt })
    }
  }
  return [...out.values()].sort(compareHits).slice(0, limit)
}
