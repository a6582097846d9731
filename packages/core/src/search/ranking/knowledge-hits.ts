import type { EngramDb } from '../../catalog/schema.js'
import type { CachedRecord } from '../cache/query-cache.js'
import { entityText, type KnowledgeRowParts, relationRowText } from '../index/knowledge-text.js'

type EntityParts = KnowledgeRowParts['entity']
type RelationParts = KnowledgeRowParts['relation']

/**
 * The records behind entity and relation hits (inside the caller's read transaction), by
 * document id: live entities (not merged away) and live relations, with the text they are
 * indexed as. Equality lookups one id each: an encrypted store keeps entity ids as keyed hashes.
 */
export async function knowledgeRecords(db: EngramDb, entityIds: readonly string[], relationIds: readonly string[]): Promise<Map<string, CachedRecord>> {
  const out = new Map<string, CachedRecord>()
  if (entityIds.length === 0 && relationIds.length === 0) return out
  const entities = db.table<EntityParts, string>('entities')
  const [found, relations] = await Promise.all([
    Promise.all(entityIds.map((id) => entities.where('id').equals(id).first())),
    relationIds.length ? db.table<RelationParts, string>('relations').bulkGet([...relationIds]) : ([] as (RelationParts | undefined)[]),
  ])
  for (const e of found)
    if (e && e.deletedAt === undefined && e.mergedInto === undefined) out.set(`entity:${e.id}`, { projectId: e.projectId, text: entityText(e) })
  const live = relations.filter((r): r is RelationParts => r !== undefined && r.deletedAt === undefined)
  const ends = [...new Set(live.flatMap((r) => (r.objectId === undefined ? [r.subjectId] : [r.subjectId, r.objectId])))]
  const named = await Promise.all(ends.map((id) => entities.where('id').equals(id).first()))
  const names = new Map(named.flatMap((e) => (e ? [[e.id, e.name] as const] : [])))
  for (const r of live) out.set(`relation:${r.id}`, { projectId: r.projectId, text: relationRowText(r, names) })
  return out
}
