import { type EntityGraphEdits, requireEntity, storeEntityRow } from '../entities/entities.js'
import { checkEntitySize } from '../entities/entity-input.js'
import { mergedIds } from '../entities/entity-resolve.js'
import { type EntityRow, entityTable, nameKey, nameKeysOf, toEntity } from '../entities/entity-rows.js'
import { invalidInput } from '../store/errors.js'
import { linkPerson, resolvePerson } from '../people/person-links.js'
import { USER_PROJECT } from '../store/store-context.js'
import { editObservations } from '../entities/observation-set.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId } from '../store/validate.js'
import { type WriteScope, write } from '../store/write.js'
import type { RelationRow } from './relation-rows.js'
import { relationTable } from './relation-rows.js'
import { rederiveSubject, relationTables, storeRelationRow } from './relation-store.js'

/** Creates the entity edits that touch relations. */
export function createEntityGraphEdits(ctx: StoreContext): EntityGraphEdits {
  return {
    async merge(projectId, fromId, intoId) {
      checkId('projectId', projectId)
      checkId('fromId', fromId)
      checkId('intoId', intoId)
      if (fromId === intoId) throw invalidInput(`An entity cannot be merged into itself (${JSON.stringify(fromId)})`)
      return write(ctx, [...relationTables(ctx), 'people'], async (w) => {
        const [from, into] = await Promise.all([requireEntity(ctx, projectId, fromId), requireEntity(ctx, projectId, intoId)])
        if (from.id === into.id)
          throw invalidInput(`${JSON.stringify(fromId)} and ${JSON.stringify(intoId)} are one entity already: merging them would make a cycle`)
        const now = ctx.now()
        const names = new Set([nameKey(into.name), ...into.aliases.map(nameKey)])
        const aliases = [...into.aliases]
        for (const a of [from.name, ...from.aliases]) if (!names.has(nameKey(a)) && names.add(nameKey(a))) aliases.push(a)
        const observations = [...into.observations, ...from.observations.filter((o) => !into.observations.includes(o))]
        checkEntitySize(aliases, observations)
        const hlc = w.hlc(into.hlc)
        const merged: EntityRow = {
          ...into,
          aliases,
          ...editObservations(into, observations, hlc),
          nameKeys: nameKeysOf(projectId, into.name, aliases),
          updatedAt: now,
          hlc,
        }
        const pointer: EntityRow = { ...from, mergedInto: into.id, updatedAt: now, hlc: w.hlc(from.hlc) }
        await storeEntityRow(ctx, w, merged)
        await storeEntityRow(ctx, w, pointer)
        await moveRelations(ctx, w, await mergedIds(ctx, from.id), into.id)
        await rederiveSubject(ctx, w, into.id)
        // People are the person entities of the user project: their ids are linked as the entities merge.
        if (projectId === USER_PROJECT && from.type === 'person' && into.type === 'person') {
          const [fromRoot, intoRoot] = await Promise.all([resolvePerson(ctx, from.name), resolvePerson(ctx, into.name)])
          if (fromRoot !== intoRoot && intoRoot !== from.name) await linkPerson(ctx, (id) => w.change('people', 'put', id, ''), from.name, into.name)
        }
        return toEntity(merged)
      })
    },

    async delete(projectId, id) {
      checkId('projectId', projectId)
      checkId('id', id)
      return write(ctx, relationTables(ctx), async (w) => {
        const row = await entityTable(ctx).get(id)
        if (!row || row.projectId !== projectId || row.deletedAt !== undefined) return false
        const now = ctx.now()
        const ids = await mergedIds(ctx, id)
        const [out, into] = await Promise.all([
          relationTable(ctx).where('subjectId').anyOf(ids).toArray(),
          relationTable(ctx).where('objectId').anyOf(ids).toArray(),
        ])
        const subjects = new Set<string>()
        for (const r of [...out, ...into]) {
          if (r.deletedAt !== undefined) continue
          await storeRelationRow(ctx, w, tombstone(r, now, w))
          if (!ids.includes(r.subjectId)) subjects.add(r.subjectId)
        }
        await storeEntityRow(ctx, w, { ...row, deletedAt: now, updatedAt: now, hlc: w.hlc(row.hlc) })
        for (const s of subjects) await rederiveSubject(ctx, w, s)
        return true
      })
    },
  }
}

function tombstone(row: RelationRow, now: number, w: WriteScope): RelationRow {
  const out: RelationRow = { ...row, deletedAt: now, updatedAt: now, hlc: w.hlc(row.hlc) }
  delete out.closedAt
  delete out.closedBy
  return out
}

/** Points the relations of `ids` at `into`; one that would join `into` to itself is deleted. */
async function moveRelations(ctx: StoreContext, w: WriteScope, ids: readonly string[], into: string): Promise<void> {
  const now = ctx.now()
  const [out, incoming] = await Promise.all([
    relationTable(ctx).where('subjectId').anyOf(ids).toArray(),
    relationTable(ctx).where('objectId').anyOf(ids).toArray(),
  ])
  const moved = new Map<string, RelationRow>()
  for (const r of [...out, ...incoming]) {
    if (r.deletedAt !== undefined) continue
    const row = moved.get(r.id) ?? { ...r }
    if (ids.includes(row.subjectId)) row.subjectId = into
    if (row.objectId !== undefined && ids.includes(row.objectId)) row.objectId = into
    moved.set(r.id, row)
  }
  for (const row of moved.values()) {
    if (row.objectId === row.subjectId) await storeRelationRow(ctx, w, tombstone(row, now, w))
    else await storeRelationRow(ctx, w, { ...row, updatedAt: now, hlc: w.hlc(row.hlc) })
  }
}
