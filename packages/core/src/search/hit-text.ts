import type { EngramDb, FactRow } from '../schema.js'
import type { Candidate } from './bm25.js'
import { recordIdOf } from './index-rows.js'
import type { Hit, HitKind } from './search.js'

/** The text a fact is indexed and shown as: `key: value` (strings unquoted). */
export function factText(key: string, value: unknown): string {
  return `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`
}

interface Resolved {
  text: string
  sessionId?: string
}

/**
 * Loads the records behind ranked candidates (inside the caller's read
 * transaction) and returns hits in the same order. Records that are gone,
 * soft-deleted or of another project are dropped, so a stale posting can
 * never bring a deleted memory back.
 */
export async function resolveHits(db: EngramDb, projectId: string, candidates: readonly Candidate[]): Promise<Hit[]> {
  const ids: Record<HitKind, string[]> = { message: [], fact: [], summary: [], passage: [] }
  for (const c of candidates) ids[c.kind].push(recordIdOf(c.docId, c.kind))
  const found = new Map<string, Resolved>()
  const [messages, facts, summaries, passages] = await Promise.all([
    ids.message.length ? db.messages.bulkGet(ids.message) : [],
    // One equality lookup per id (not anyOf's key-ordered cursor): an encrypted store keeps fact ids as keyed hashes.
    ids.fact.length
      ? Promise.all(ids.fact.map((id) => db.facts.where('id').equals(id).first())).then((rows) => rows.filter((r) => r !== undefined))
      : ([] as FactRow[]),
    ids.summary.length ? db.summaries.bulkGet(ids.summary) : [],
    ids.passage.length ? db.passages.bulkGet(ids.passage) : [],
  ])
  for (const m of messages) if (m && m.projectId === projectId) found.set(`message:${m.id}`, { text: m.content, sessionId: m.sessionId })
  for (const f of facts) if (f.projectId === projectId && f.deletedAt === undefined) found.set(`fact:${f.id}`, { text: factText(f.key, f.value) })
  for (const s of summaries) {
    if (s && s.projectId === projectId && s.deletedAt === undefined)
      found.set(`summary:${s.id}`, s.sessionId === undefined ? { text: s.text } : { text: s.text, sessionId: s.sessionId })
  }
  for (const p of passages) if (p && p.projectId === projectId) found.set(`passage:${p.id}`, { text: p.text })
  const hits: Hit[] = []
  for (const c of candidates) {
    const r = found.get(c.docId)
    if (!r) continue
    const hit: Hit = { kind: c.kind, id: recordIdOf(c.docId, c.kind), projectId, text: r.text, score: c.score, createdAt: c.at }
    if (r.sessionId !== undefined) hit.sessionId = r.sessionId
    hits.push(hit)
  }
  return hits
}
