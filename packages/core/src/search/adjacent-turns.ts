import type { EngramDb, MessageRow } from '../schema.js'
import type { Hit } from './search.js'

/** Message hits (the best ones) whose adjacent turns join the ranking. */
export const ADJACENT_SEEDS = 3
/** An adjacent turn scores this share of its hit's score. */
export const ADJACENT_SHARE = 0.6

const compareHits = (a: Hit, b: Hit) => b.score - a.score || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Conversation context as a ranking signal: the turns just before and after
 * the best message hits join the ranking at {@link ADJACENT_SHARE} of their
 * hit's score (an answer often sits in the reply to the turn that matches
 * the words). Returns the best `limit`, best first. Runs inside the caller's
 * read transaction.
 */
export async function withAdjacentTurns(db: EngramDb, projectId: string, hits: readonly Hit[], limit: number): Promise<Hit[]> {
  const seeds = hits.filter((h) => h.kind === 'message').slice(0, ADJACENT_SEEDS)
  if (seeds.length === 0) return hits.slice(0, limit)
  const rows = (await db.messages.bulkGet(seeds.map((h) => h.id))).filter((r): r is MessageRow => r !== undefined)
  const slots: [string, number][] = rows.flatMap(
    (r) =>
      [
        [r.sessionId, r.seq - 1],
        [r.sessionId, r.seq + 1],
      ] as [string, number][],
  )
  // One keyed get per slot: a multi-range anyOf walks the index with a cursor, much slower here.
  const around = (await Promise.all(slots.map(([sessionId, seq]) => db.messages.where('[sessionId+seq]').equals([sessionId, seq]).first()))).filter(
    (m): m is MessageRow => m !== undefined,
  )
  const score = new Map(seeds.map((h) => [h.id, h.score]))
  const out = new Map(hits.map((h) => [`${h.kind}:${h.id}`, { ...h }]))
  for (const r of rows) {
    for (const m of around) {
      if (m.projectId !== projectId || m.sessionId !== r.sessionId || Math.abs(m.seq - r.seq) !== 1) continue
      const s = ADJACENT_SHARE * score.get(r.id)!
      const found = out.get(`message:${m.id}`)
      if (found) found.score = Math.max(found.score, s)
      else out.set(`message:${m.id}`, { kind: 'message', id: m.id, projectId, sessionId: m.sessionId, text: m.content, score: s, createdAt: m.createdAt })
    }
  }
  return [...out.values()].sort(compareHits).slice(0, limit)
}
