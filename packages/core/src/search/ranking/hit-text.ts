import type { EngramDb } from '../../catalog/schema.js'
import type { FactRow } from '../../store/rows.js'
import type { Candidate } from './bm25.js'
import { recordIdOf } from '../index/index-rows.js'
import type { CachedRecord, QueryCache } from '../cache/query-cache.js'
import type { Hit, HitKind } from '../types.js'
import { factText } from '../index/fact-text.js'
import { knowledgeRecords } from './knowledge-hits.js'
import { isSearchableObservation, type ObservationDocParts } from '../index/observation-text.js'

/** A query cache and the generation a read fills it with. */
export interface CacheAt {
  cache: QueryCache
  generation: number
}

/**
 * Loads the records behind ranked candidates (inside the caller's read
 * transaction) and returns hits in the same order. Records that are gone,
 * soft-deleted or of another project are dropped, so a stale posting can
 * never bring a deleted memory back. With a `cache`, records it holds are
 * not read, and those read are kept (only live ones: a missing or deleted
 * record is read again next time).
 */
export async function resolveHits(db: EngramDb, projectId: string, candidates: readonly Candidate[], cached?: CacheAt): Promise<Hit[]> {
  const ids: Record<HitKind, string[]> = { message: [], fact: [], summary: [], passage: [], entity: [], relation: [], observation: [] }
  const found = new Map<string, CachedRecord>()
  for (const c of candidates) {
    const hit = cached?.cache.record(c.docId)
    if (hit) found.set(c.docId, hit)
    else ids[c.kind].push(recordIdOf(c.docId, c.kind))
  }
  const keep = (key: string, record: CachedRecord) => {
    found.set(key, record)
    cached?.cache.keepRecord(key, record, cached.generation)
  }
  const [messages, facts, summaries, passages, observations] = await Promise.all([
    ids.message.length ? db.messages.bulkGet(ids.message) : [],
    // One equality lookup per id (not anyOf's key-ordered cursor): an encrypted store keeps fact ids as keyed hashes.
    ids.fact.length
      ? Promise.all(ids.fact.map((id) => db.facts.where('id').equals(id).first())).then((rows) => rows.filter((r) => r !== undefined))
      : ([] as FactRow[]),
    ids.summary.length ? db.summaries.bulkGet(ids.summary) : [],
    ids.passage.length ? db.passages.bulkGet(ids.passage) : [],
    ids.observation.length ? db.table<ObservationDocParts, string>('observations').bulkGet(ids.observation) : [],
  ])
  // Entities and relations: their index text is what a hit shows (search/index/knowledge-text.ts), read from their rows.
  for (const [key, record] of await knowledgeRecords(db, ids.entity, ids.relation)) keep(key, record)
  for (const m of messages)
    if (m && m.deletedAt === undefined) keep(`message:${m.id}`, { projectId: m.projectId, text: m.content, sessionId: m.sessionId, message: m })
  for (const f of facts) if (f.deletedAt === undefined) keep(`fact:${f.id}`, { projectId: f.projectId, text: factText(f.key, f.value) })
  for (const s of summaries) {
    if (s && s.deletedAt === undefined)
      keep(
        `summary:${s.id}`,
        s.sessionId === undefined ? { projectId: s.projectId, text: s.text } : { projectId: s.projectId, text: s.text, sessionId: s.sessionId },
      )
  }
  for (const p of passages) if (p) keep(`passage:${p.id}`, { projectId: p.projectId, text: p.text })
  // Observations a reflection condensed (or the sweep purged) are not hits, even through a stale posting.
  for (const o of observations)
    if (o && isSearchableObservation(o)) keep(`observation:${o.id}`, { projectId: o.projectId, text: o.text, sessionId: o.sessionId })
  const hits: Hit[] = []
  for (const c of candidates) {
    const r = found.get(c.docId)
    if (!r || r.projectId !== projectId) continue
    const hit: Hit = { kind: c.kind, id: recordIdOf(c.docId, c.kind), projectId, text: r.text, score: c.score, createdAt: c.at }
    if (r.sessionId !== undefined) hit.sessionId = r.sessionId
    hits.push(hit)
  }
  return hits
}
