import type { StoreContext } from '../store/store-context.js'
import { type EntityRow, entityTable, nameKey, nameKeyOf } from './entity-rows.js'

/** Longest merge chain followed: merges point at canonical entities, so chains stay short; this bounds a corrupt one. */
const MAX_CHAIN = 64

/**
 * The canonical row of an entity: it, or the entity it was merged into, followed to the end.
 * Two devices may each merge one entity into the other while offline; once both merges
 * arrived the chain is a cycle, and every device then takes the same entity as canonical:
 * the one with the smallest id in the cycle. Deleted rows are returned as they are.
 */
export async function canonicalEntity(ctx: StoreContext, row: EntityRow | undefined): Promise<EntityRow | undefined> {
  const seen: EntityRow[] = []
  let current = row
  while (current?.mergedInto !== undefined && seen.length < MAX_CHAIN) {
    if (seen.some((r) => r.id === current!.id)) {
      const cycle = seen.slice(seen.findIndex((r) => r.id === current!.id))
      return cycle.reduce((a, b) => (a.id < b.id ? a : b))
    }
    seen.push(current)
    current = await entityTable(ctx).get(current.mergedInto)
  }
  return current ?? seen.at(-1)
}

/** The canonical id of an entity id (itself when it was never merged or is unknown). */
export async function canonicalId(ctx: StoreContext, id: string): Promise<string> {
  return (await canonicalEntity(ctx, await entityTable(ctx).get(id)))?.id ?? id
}

/**
 * Every id that stands for the canonical entity `id`: it and the entities merged into it, at
 * any depth (a cycle of merges included). Relations are read under all of them, so a relation
 * another device wrote to an entity merged here meanwhile is still found.
 */
export async function mergedIds(ctx: StoreContext, id: string): Promise<string[]> {
  return (await mergedIdsOf(ctx, [id])).get(id)!
}

/**
 * {@link mergedIds} of several canonical entities at once: one lookup per level of merges
 * for all of them (a store where nothing was merged answers with one empty lookup).
 */
export async function mergedIdsOf(ctx: StoreContext, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map(ids.map((id) => [id, [id]]))
  const rootOf = new Map(ids.map((id) => [id, id]))
  let frontier = [...ids]
  for (let depth = 0; frontier.length > 0 && depth < MAX_CHAIN; depth++) {
    const rows = await entityTable(ctx).where('mergedInto').anyOf(frontier).toArray()
    frontier = []
    for (const r of rows) {
      const root = rootOf.get(r.mergedInto!)
      if (root === undefined || rootOf.has(r.id)) continue
      rootOf.set(r.id, root)
      out.get(root)!.push(r.id)
      frontier.push(r.id)
    }
  }
  return out
}

/**
 * The canonical live entity a name or alias names in a project (case and accents ignored),
 * of `type` when given. Where several match: one whose own name matches before one found by
 * alias, then the oldest, then the smallest id.
 */
export async function resolveName(ctx: StoreContext, projectId: string, name: string, type?: string): Promise<EntityRow | undefined> {
  const key = nameKey(name)
  const rows = await entityTable(ctx).where('nameKeys').equals(nameKeyOf(projectId, name)).toArray()
  const candidates: EntityRow[] = []
  for (const row of rows) {
    if (row.projectId !== projectId || row.deletedAt !== undefined) continue
    const canonical = await canonicalEntity(ctx, row)
    if (!canonical || canonical.deletedAt !== undefined || canonical.projectId !== projectId) continue
    if (type !== undefined && nameKey(canonical.type) !== nameKey(type)) continue
    if (!candidates.some((c) => c.id === canonical.id)) candidates.push(canonical)
  }
  const byName = (r: EntityRow) => (nameKey(r.name) === key ? 0 : 1)
  return candidates.sort((a, b) => byName(a) - byName(b) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))[0]
}
