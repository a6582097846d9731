import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkTime } from '../store/validate.js'
import { storeEntityRow } from './entities.js'
import { checkEntitySize, checkList, checkName, checkObservation, checkType, MAX_ALIASES, MAX_OBSERVATIONS } from './entity-input.js'
import { canonicalId } from './entity-resolve.js'
import { rederiveSubject } from '../relations/relation-store.js'
import { checkProvenance } from '../relations/relation-input.js'
import { entityId, type EntityRow, entityTable, nameKey, nameKeysOf } from './entity-rows.js'

const FIELDS = ['id', 'projectId', 'type', 'name', 'aliases', 'observations', 'createdAt', 'updatedAt', 'mergedInto', 'deletedAt', 'hlc', 'provenance'] as const

/**
 * Entities as sync mirrors them: one record per entity, id `entityId(projectId, type, first
 * name)`, so the same thing named on two devices is one record; the latest state by HLC wins
 * (two devices adding observations to one entity at once keep the later device's list).
 */
export const syncedEntities: SyncedKind<EntityRow> = {
  kind: 'entities',
  tables: ['entities', 'relations'],
  read: (ctx, _projectId, id) => entityTable(ctx).get(id),
  readProject: (ctx, projectId) => entityTable(ctx).where('[projectId+type]').between([projectId, ''], [projectId, '\uffff']).toArray(),
  toRecord: (row) => ({ kind: 'entities', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row, ['nameKeys']) }),
  check(record) {
    const r = checkEnvelope(record, 'entities', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const projectId = record.projectId
    const type = checkType('entity.type', r.type)
    const name = checkName('entity.name', r.name)
    const aliases = checkList('entity.aliases', r.aliases, MAX_ALIASES, checkName)
    const observations = checkList('entity.observations', r.observations, MAX_OBSERVATIONS, checkObservation)
    checkEntitySize(aliases, observations)
    // The id is made of the entity's first name, which may since be an alias (a rename keeps the id).
    if (![name, ...aliases].some((n) => entityId(projectId, type, n) === record.id))
      throw invalidInput(`An entity record's id ${JSON.stringify(record.id)} matches none of its names`)
    const row: EntityRow = {
      id: record.id,
      projectId,
      type,
      name,
      aliases: aliases.filter((a) => nameKey(a) !== nameKey(name)),
      observations,
      nameKeys: [],
      createdAt: checkTime('entity.createdAt', r.createdAt),
      updatedAt: checkTime('entity.updatedAt', r.updatedAt),
      hlc: record.hlc,
    }
    row.nameKeys = nameKeysOf(projectId, name, row.aliases)
    if (r.mergedInto !== undefined) {
      row.mergedInto = checkId('entity.mergedInto', r.mergedInto)
      if (row.mergedInto === row.id) throw invalidInput('An entity cannot be merged into itself')
    }
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('entity.deletedAt', r.deletedAt)
    const provenance = checkProvenance('entity.provenance', r.provenance)
    if (provenance) row.provenance = provenance
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await entityTable(ctx).get(row.id)
    checkSameProject('entities', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await storeEntityRow(ctx, w, row)
    // A merge (or its undoing by a later state) joins chains: the windows of the entity it now stands for are derived again.
    if (row.mergedInto !== stored?.mergedInto) {
      for (const id of new Set([row.id, row.mergedInto, stored?.mergedInto])) if (id !== undefined) await rederiveSubject(ctx, w, await canonicalId(ctx, id))
    }
    return true
  },
}
