import { canonicalEntity, mergedIdsOf } from '../entities/entity-resolve.js'
import { type EntityRow, entityTable } from '../entities/entity-rows.js'
import type { StoreContext } from '../store/store-context.js'
import { predicateKey } from './predicates.js'
import { holdsAt, type RelationRow, relationTable } from './relation-rows.js'

/** Which relations of an entity: those it is the subject of, the object of, or both. */
export type Direction = 'out' | 'in' | 'both'

/** The relations of one canonical entity (read under every id merged into it), live ones only. */
export async function relationsOf(ctx: StoreContext, ids: readonly string[], direction: Direction): Promise<RelationRow[]> {
  // One equality read per id and side (a single getAll each, all issued at once): an anyOf
  // cursor pays a round trip per row.
  const by = (index: 'subjectId' | 'objectId') => ids.map((id) => relationTable(ctx).where(index).equals(id).toArray())
  const parts = await Promise.all([...(direction === 'in' ? [] : by('subjectId')), ...(direction === 'out' ? [] : by('objectId'))])
  const seen = new Set<string>()
  const rows: RelationRow[] = []
  for (const part of parts) for (const row of part) if (row.deletedAt === undefined && !seen.has(row.id) && seen.add(row.id)) rows.push(row)
  return rows
}

/**
 * The relations holding at `t` (validFrom ≤ t < validTo), ordered for reading: by predicate,
 * then newest first. Two assertions of one multi-valued fact (written on two devices) are
 * shown once: the earliest.
 */
export function holdingAt(rows: readonly RelationRow[], t: number): RelationRow[] {
  const byFact = new Map<string, RelationRow>()
  for (const row of rows) {
    if (!holdsAt(row, t)) continue
    const fact = `${row.subjectId}\u0001${predicateKey(row.predicate)}\u0001${row.objectId ?? `=${JSON.stringify(row.value)}`}`
    const seen = byFact.get(fact)
    if (!seen || row.validFrom < seen.validFrom || (row.validFrom === seen.validFrom && row.id < seen.id)) byFact.set(fact, row)
  }
  return [...byFact.values()].sort(readingOrder)
}

/** Predicate, then newest `validFrom` first, then id. */
export function readingOrder(a: RelationRow, b: RelationRow): number {
  const pa = predicateKey(a.predicate)
  const pb = predicateKey(b.predicate)
  return (pa < pb ? -1 : pa > pb ? 1 : 0) || b.validFrom - a.validFrom || (a.id < b.id ? -1 : 1)
}

/** What a neighbourhood walk found. */
export interface Neighbourhood {
  entities: EntityRow[]
  relations: RelationRow[]
}

/**
 * A breadth-first walk from a canonical entity over the relations holding at `t`, both
 * directions, `depth` hops, stopping once `limit` relations were collected. The start entity
 * comes first; the others in the order they were reached.
 */
export async function walkAround(ctx: StoreContext, start: EntityRow, t: number, depth: number, limit: number): Promise<Neighbourhood> {
  const entities = new Map<string, EntityRow>([[start.id, start]])
  const relations = new Map<string, RelationRow>()
  let frontier = [start.id]
  for (let hop = 0; hop < depth && frontier.length > 0 && relations.size < limit; hop++) {
    const ids = [...(await mergedIdsOf(ctx, frontier)).values()].flat()
    const rows = holdingAt(await relationsOf(ctx, ids, 'both'), t)
    const reached = new Set<string>()
    for (const row of rows) {
      if (relations.size >= limit) break
      if (relations.has(row.id)) continue
      relations.set(row.id, row)
      for (const id of [row.subjectId, row.objectId]) if (id !== undefined && !entities.has(id)) reached.add(id)
    }
    const found = await entityTable(ctx).bulkGet([...reached])
    frontier = []
    for (const row of found) {
      const canonical = await canonicalEntity(ctx, row)
      if (!canonical || canonical.deletedAt !== undefined || entities.has(canonical.id)) continue
      entities.set(canonical.id, canonical)
      frontier.push(canonical.id)
    }
  }
  return { entities: [...entities.values()], relations: [...relations.values()] }
}
