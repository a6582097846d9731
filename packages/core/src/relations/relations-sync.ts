import { canonicalId } from '../entities/entity-resolve.js'
import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkNumber, checkTime, type Json } from '../store/validate.js'
import { predicateKey } from './predicates.js'
import { checkLiteral, checkPredicate, checkProvenance, checkWindow } from './relation-input.js'
import { type RelationRow, relationTable } from './relation-rows.js'
import { rederiveSubject, storeRelationRow } from './relation-store.js'

const FIELDS = [
  'id',
  'projectId',
  'subjectId',
  'predicate',
  'objectId',
  'value',
  'validFrom',
  'statedTo',
  'confidence',
  'provenance',
  'createdAt',
  'updatedAt',
  'deletedAt',
  'hlc',
] as const

/**
 * Relations as sync mirrors them: one record per assertion (a random id), the latest state by
 * HLC wins. What travels is the assertion and the end its writer gave (`statedTo`); the close a
 * single-valued predicate derives (`closedAt`, `closedBy`) is derived again on every device
 * after each applied record, from the assertions it holds (relation-windows.ts), so devices
 * that hold the same records agree on every window whatever order they received them in.
 */
export const syncedRelations: SyncedKind<RelationRow> = {
  kind: 'relations',
  tables: ['entities', 'relations'],
  read: (ctx, _projectId, id) => relationTable(ctx).get(id),
  readProject: (ctx, projectId) => relationTable(ctx).where('projectId').equals(projectId).toArray(),
  toRecord: (row) => ({ kind: 'relations', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row, ['closedAt', 'closedBy']) }),
  check(record) {
    const r = checkEnvelope(record, 'relations', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const row: RelationRow = {
      id: record.id,
      projectId: record.projectId,
      subjectId: checkId('relation.subjectId', r.subjectId),
      predicate: checkPredicate('relation.predicate', r.predicate),
      validFrom: checkTime('relation.validFrom', r.validFrom),
      confidence: checkNumber('relation.confidence', r.confidence, { min: 0, max: 1 }),
      createdAt: checkTime('relation.createdAt', r.createdAt),
      updatedAt: checkTime('relation.updatedAt', r.updatedAt),
      hlc: record.hlc,
    }
    if ((r.objectId === undefined) === (r.value === undefined)) throw invalidInput('A relation record needs exactly one of objectId and value')
    if (r.objectId !== undefined) row.objectId = checkId('relation.objectId', r.objectId)
    else row.value = checkLiteral('relation.value', r.value)
    if (r.statedTo !== undefined) row.statedTo = checkTime('relation.statedTo', r.statedTo)
    checkWindow(row.validFrom, row.statedTo)
    const provenance = checkProvenance('relation.provenance', r.provenance as Json)
    if (provenance) row.provenance = provenance
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('relation.deletedAt', r.deletedAt)
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await relationTable(ctx).get(row.id)
    checkSameProject('relations', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await storeRelationRow(ctx, w, row)
    const subjects = new Set([await canonicalId(ctx, row.subjectId)])
    if (stored && stored.subjectId !== row.subjectId) subjects.add(await canonicalId(ctx, stored.subjectId))
    const keys = new Set([predicateKey(row.predicate), ...(stored ? [predicateKey(stored.predicate)] : [])])
    // A multi-valued row is derived too: it drops a close an earlier state of the store gave it.
    for (const s of subjects) await rederiveSubject(ctx, w, s, keys)
    return true
  },
}
