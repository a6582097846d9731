import { canonicalId } from '../entities/entity-resolve.js'
import { entityDoc, type EntityRow, nameKeysOf } from '../entities/entity-rows.js'
import { indexDocs } from '../search/index/index-docs.js'
import { relationRowText } from '../search/index/knowledge-text.js'
import type { IndexedDoc, StoreContext } from '../store/store-context.js'
import type { WriteScope } from '../store/write.js'
import type { RelationRow } from '../relations/relation-rows.js'
import { rederiveSubject } from '../relations/relation-store.js'

type Row = Record<string, unknown>

/**
 * Imported entity rows with their name index keys made again (a hand-edited dump cannot
 * split one name in two), and relation rows without derived closes (derived again after the
 * import wrote them, from the assertions the store then holds).
 */
export function prepareKnowledgeRows(table: string, rows: Row[]): Row[] | undefined {
  if (table === 'entities')
    return rows.map((r) => ({ ...r, nameKeys: nameKeysOf(r.projectId as string, r.name as string, (r.aliases as string[] | undefined) ?? []) }))
  if (table === 'relations')
    return rows.map((r) => {
      const { closedAt: _at, closedBy: _by, ...rest } = r
      return rest
    })
  return undefined
}

/**
 * After an import wrote entities and relations: their search documents (one batch), and the
 * windows of every subject an imported relation names derived again.
 */
export async function finishKnowledgeImport(ctx: StoreContext, w: WriteScope, entities: readonly Row[], relations: readonly Row[]): Promise<void> {
  if (entities.length === 0 && relations.length === 0) return
  const docs: IndexedDoc[] = []
  for (const e of entities as unknown as EntityRow[]) if (e.deletedAt === undefined && e.mergedInto === undefined) docs.push(entityDoc(e))
  const live = (relations as unknown as RelationRow[]).filter((r) => r.deletedAt === undefined)
  if (live.length > 0) {
    const ids = [...new Set(live.flatMap((r) => (r.objectId === undefined ? [r.subjectId] : [r.subjectId, r.objectId])))]
    const named = await ctx.db.table<EntityRow, string>('entities').bulkGet(ids)
    const names = new Map(named.flatMap((e) => (e ? [[e.id, e.name] as const] : [])))
    for (const r of live)
      docs.push({ docId: `relation:${r.id}`, kind: 'relation', projectId: r.projectId, text: relationRowText(r, names), createdAt: r.validFrom })
  }
  for (const r of relations as unknown as RelationRow[]) if (r.deletedAt !== undefined) await ctx.index.remove(w, `relation:${r.id}`)
  await indexDocs(ctx.index, w, docs)
  const subjects = new Set<string>()
  for (const r of relations as unknown as RelationRow[]) subjects.add(await canonicalId(ctx, r.subjectId))
  for (const s of subjects) await rederiveSubject(ctx, w, s)
}
