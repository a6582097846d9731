import { invalidInput, MemoryError } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import type { WriteScope } from '../store/write.js'
import { compareHlc } from '../store/hlc.js'
import { checkEnvelope, checkSameProject, checkStamp, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkOptions, checkTime } from '../store/validate.js'
import { storeEntityRow } from './entities.js'
import { checkEntitySize, checkList, checkName, checkObservation, checkType, MAX_ALIASES, MAX_OBSERVATIONS } from './entity-input.js'
import { canonicalId } from './entity-resolve.js'
import { rederiveSubject, reindexRelationsOf } from '../relations/relation-store.js'
import { MAX_TOMBSTONES, mergeObservations, type ObservationSet, type ObservationTombstone, sameObservations } from './observation-set.js'
import { checkProvenance } from '../relations/relation-input.js'
import { entityId, type EntityRow, entityTable, nameKey, nameKeysOf } from './entity-rows.js'

const FIELDS = [
  'id',
  'projectId',
  'type',
  'name',
  'aliases',
  'observations',
  'observationStamps',
  'observationTombstones',
  'createdAt',
  'updatedAt',
  'mergedInto',
  'deletedAt',
  'hlc',
  'provenance',
] as const

/**
 * Entities as sync mirrors them: one record per entity, id `entityId(projectId, type, first
 * name)`, so the same thing named on two devices is one record. Its name, type, aliases, merge
 * and deletion are the latest state by HLC; its observations merge as a set with tombstones
 * (observation-set.ts): a state that lacks observations this device holds is stored merged and
 * stamped again, so the mirror publishes the merge and every device ends with it.
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
    Object.assign(row, checkObservationMarks(r, observations))
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await entityTable(ctx).get(row.id)
    checkSameProject('entities', row.id, stored, row.projectId)
    if (!stored) {
      await store(ctx, w, row, undefined)
      return true
    }
    const newer = compareHlc(row.hlc, stored.hlc) > 0
    const merged = mergeObservations(stored, row)
    const base = newer ? row : stored
    if (sameObservations({ ...merged, hlc: base.hlc }, base)) {
      if (!newer) return false
      await store(ctx, w, row, stored)
      return true
    }
    // Each side holds observations (or removals) the other lacks: the union, stamped after both, which this device publishes.
    await store(ctx, w, { ...base, ...merged, hlc: w.hlc(newer ? row.hlc : stored.hlc) }, stored)
    return false
  },
}

/** Stores an entity state from another device, and what follows from it. */
async function store(ctx: StoreContext, w: WriteScope, row: EntityRow, stored: EntityRow | undefined): Promise<void> {
  await storeEntityRow(ctx, w, row)
  // A relation that arrived before its entity was indexed with the bare id: now with the name.
  if (row.name !== stored?.name) await reindexRelationsOf(ctx, w, row.id)
  // A merge (or its undoing by a later state) joins chains: the windows of the entity it now stands for are derived again.
  if (row.mergedInto !== stored?.mergedInto) {
    for (const id of new Set([row.id, row.mergedInto, stored?.mergedInto])) if (id !== undefined) await rederiveSubject(ctx, w, await canonicalId(ctx, id))
  }
}

/** Checks the stamps and tombstones of a record's observations. @throws MemoryError `invalid_input`, `limit_exceeded`. */
function checkObservationMarks(r: { [field: string]: unknown }, observations: readonly string[]): Omit<ObservationSet, 'observations'> {
  const out: Omit<ObservationSet, 'observations'> = {}
  if (r.observationStamps !== undefined) {
    if (!Array.isArray(r.observationStamps) || r.observationStamps.length !== observations.length)
      throw invalidInput('entity.observationStamps must hold one stamp per observation')
    out.observationStamps = r.observationStamps.map((s) => checkStamp(s))
  }
  if (r.observationTombstones !== undefined) {
    const t = r.observationTombstones
    if (!Array.isArray(t)) throw invalidInput('entity.observationTombstones must be an array of { text, hlc }')
    if (t.length > MAX_TOMBSTONES)
      throw new MemoryError('limit_exceeded', `entity.observationTombstones holds ${t.length} entries, more than ${MAX_TOMBSTONES}`)
    out.observationTombstones = t.map((x: unknown, i) => {
      if (typeof x !== 'object' || x === null || Array.isArray(x)) throw invalidInput(`entity.observationTombstones[${i}] must be { text, hlc }`)
      const o = checkOptions(`entity.observationTombstones[${i}]`, x as ObservationTombstone, ['text', 'hlc'])
      return { text: checkObservation(`entity.observationTombstones[${i}].text`, o.text), hlc: checkStamp(o.hlc) }
    })
  }
  return out
}
