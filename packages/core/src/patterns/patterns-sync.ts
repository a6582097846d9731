import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { normalisePattern, patternId, type PatternRow } from './patterns.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkNumber, checkTime } from '../store/validate.js'

const FIELDS = ['id', 'projectId', 'text', 'confidence', 'observations', 'createdAt', 'updatedAt', 'hlc', 'deletedAt'] as const

/**
 * Patterns as sync mirrors them: one record per (project, normalised text),
 * id `patternId(projectId, norm)`, so the same pattern observed on two devices
 * converges to one record — the latest write by HLC (concurrent observations
 * do not add up: the later one wins).
 */
export const syncedPatterns: SyncedKind<PatternRow> = {
  kind: 'patterns',
  tables: ['patterns'],
  read: (ctx, _projectId, id) => ctx.db.table<PatternRow, string>('patterns').get(id),
  readProject: (ctx, projectId) => ctx.db.table<PatternRow, string>('patterns').where('projectId').equals(projectId).toArray(),
  toRecord: (row) => ({ kind: 'patterns', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row) }),
  check(record) {
    const r = checkEnvelope(record, 'patterns', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    // The same bounds as patterns.observe: a remote device gets no bigger patterns than a local call.
    const { text, norm } = normalisePattern(r.text)
    if (patternId(record.projectId, norm) !== record.id) throw invalidInput(`A pattern record's id ${JSON.stringify(record.id)} does not match its text`)
    const row: PatternRow = {
      id: record.id,
      projectId: record.projectId,
      text,
      confidence: checkNumber('pattern.confidence', r.confidence, { min: 0, max: 1 }),
      observations: checkNumber('pattern.observations', r.observations, { min: 1, integer: true }),
      createdAt: checkTime('pattern.createdAt', r.createdAt),
      updatedAt: checkTime('pattern.updatedAt', r.updatedAt),
      hlc: record.hlc,
    }
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('pattern.deletedAt', r.deletedAt)
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const table = ctx.db.table<PatternRow, string>('patterns')
    const stored = await table.get(row.id)
    checkSameProject('patterns', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await table.put(row)
    w.change('patterns', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
    return true
  },
}
