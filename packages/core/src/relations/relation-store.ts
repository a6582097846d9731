import { mergedIds } from '../entities/entity-resolve.js'
import { entityTable } from '../entities/entity-rows.js'
import type { StoreContext } from '../store/store-context.js'
import type { WriteScope } from '../store/write.js'
import { cardinalityOf, predicateKey } from './predicates.js'
import { relationDoc, type RelationRow, relationTable } from './relation-rows.js'
import { deriveChain } from './relation-windows.js'

/** Tables a relation write touches (the index's included). */
export function relationTables(ctx: StoreContext): string[] {
  return ['projects', 'entities', 'relations', ...ctx.index.tables]
}

/** The display name of an entity id for a relation's search text (the id itself when unknown). */
async function nameOf(ctx: StoreContext, id: string | undefined): Promise<string | undefined> {
  if (id === undefined) return undefined
  return (await entityTable(ctx).get(id))?.name ?? id
}

/** Stores a relation row, its search document and its change, inside a write. */
export async function storeRelationRow(ctx: StoreContext, w: WriteScope, row: RelationRow): Promise<void> {
  await relationTable(ctx).put(row)
  if (row.deletedAt === undefined) {
    const [subject, object] = await Promise.all([nameOf(ctx, row.subjectId), nameOf(ctx, row.objectId)])
    await ctx.index.put(w, relationDoc(row, subject!, object))
  } else await ctx.index.remove(w, `relation:${row.id}`)
  w.change('relations', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
}

/**
 * Indexes again the live relations an entity is the subject or object of, with its name: a
 * relation that arrived before its entity (sync order) was indexed with the bare id. The rows
 * stay as they are; their change is recorded because what search shows of them changed.
 */
export async function reindexRelationsOf(ctx: StoreContext, w: WriteScope, entityId: string): Promise<number> {
  const [asSubject, asObject] = await Promise.all([
    relationTable(ctx).where('subjectId').equals(entityId).toArray(),
    relationTable(ctx).where('objectId').equals(entityId).toArray(),
  ])
  const rows = new Map([...asSubject, ...asObject].filter((r) => r.deletedAt === undefined).map((r) => [r.id, r]))
  for (const row of rows.values()) {
    const [subject, object] = await Promise.all([nameOf(ctx, row.subjectId), nameOf(ctx, row.objectId)])
    await ctx.index.put(w, relationDoc(row, subject!, object))
    w.change('relations', 'put', row.id, row.projectId)
  }
  return rows.size
}

/** The rows of every id standing for one canonical subject. */
export async function rowsOfSubject(ctx: StoreContext, subject: string): Promise<RelationRow[]> {
  const ids = await mergedIds(ctx, subject)
  const parts = await Promise.all(ids.map((id) => relationTable(ctx).where('subjectId').equals(id).toArray()))
  return parts.flat()
}

/**
 * Derives again the windows of the chains of a canonical subject (all its predicates, or only
 * `predicates` by key), writing the rows whose derived close changed. Multi-valued predicates
 * derive no close (their rows end only where their writer said).
 */
export async function rederiveSubject(ctx: StoreContext, w: WriteScope, subject: string, predicates?: ReadonlySet<string>): Promise<void> {
  const rows = await rowsOfSubject(ctx, subject)
  const chains = new Map<string, RelationRow[]>()
  for (const row of rows) {
    const key = predicateKey(row.predicate)
    if (predicates && !predicates.has(key)) continue
    let chain = chains.get(key)
    if (!chain) chains.set(key, (chain = []))
    chain.push(row)
  }
  const changed: RelationRow[] = []
  for (const chain of chains.values()) {
    const single = cardinalityOf(ctx, chain[0]!.predicate) === 'one'
    const derived = single ? deriveChain(chain) : new Map()
    for (const row of chain) {
      const d = derived.get(row.id) ?? {}
      if (row.closedAt === d.closedAt && row.closedBy === d.closedBy) continue
      const next = { ...row }
      delete next.closedAt
      delete next.closedBy
      if (d.closedAt !== undefined) next.closedAt = d.closedAt
      if (d.closedBy !== undefined) next.closedBy = d.closedBy
      changed.push(next)
    }
  }
  if (changed.length === 0) return
  await relationTable(ctx).bulkPut(changed)
  for (const row of changed) w.change('relations', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
}
