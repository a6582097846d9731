import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkNumber, checkOneOf, checkString, checkTime } from '../store/validate.js'
import { isSearchableObservation, observationDoc } from '../search/index/observation-text.js'
import type { ObservationRow } from './observation-rows.js'
import { MAX_OBSERVATION_TEXT, observationsTable } from './observation-writes.js'

const FIELDS = [
  'id',
  'projectId',
  'sessionId',
  'text',
  'priority',
  'observedAt',
  'throughMessageId',
  'generation',
  'supersededAt',
  'expiresAt',
  'createdAt',
  'hlc',
  'deletedAt',
] as const

/**
 * Observations as sync mirrors them (projects whose conversations sync), in the project
 * document with the sessions list: one record per observation id, the latest write by HLC
 * (a reflection supersedes, a purge leaves a text-free tombstone).
 */
export const syncedObservations: SyncedKind<ObservationRow> = {
  kind: 'observations',
  tables: ['observations'],
  read: (ctx, _projectId, id) => observationsTable(ctx).get(id),
  readProject: (ctx, projectId) => observationsTable(ctx).where('projectId').equals(projectId).toArray(),
  toRecord: (row) => ({ kind: 'observations', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row) }),
  check(record) {
    const r = checkEnvelope(record, 'observations', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const row: ObservationRow = {
      id: record.id,
      projectId: record.projectId,
      sessionId: checkId('observation.sessionId', r.sessionId),
      text: checkString('observation.text', r.text, { maxLength: MAX_OBSERVATION_TEXT }),
      priority: checkOneOf('observation.priority', r.priority, ['high', 'medium', 'low'] as const),
      observedAt: checkTime('observation.observedAt', r.observedAt),
      throughMessageId: checkId('observation.throughMessageId', r.throughMessageId),
      generation: checkNumber('observation.generation', r.generation, { min: 0, integer: true }),
      createdAt: checkTime('observation.createdAt', r.createdAt),
      hlc: record.hlc,
    }
    if (r.supersededAt !== undefined) row.supersededAt = checkTime('observation.supersededAt', r.supersededAt)
    if (r.expiresAt !== undefined) row.expiresAt = checkTime('observation.expiresAt', r.expiresAt)
    if (r.deletedAt !== undefined) {
      row.deletedAt = checkTime('observation.deletedAt', r.deletedAt)
      if (row.text !== '') throw invalidInput('A purged observation record carries no text')
    } else if (row.text.trim() === '') throw invalidInput('observation.text must not be empty')
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await observationsTable(ctx).get(row.id)
    checkSameProject('observations', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await observationsTable(ctx).put(row)
    await (isSearchableObservation(row) ? ctx.index.put(w, observationDoc(row)) : ctx.index.remove(w, `observation:${row.id}`))
    w.change('observations', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
    return true
  },
}
