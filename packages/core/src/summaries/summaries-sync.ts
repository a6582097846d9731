import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import type { SummaryRow } from '../store/rows.js'
import { indexSummary, MAX_SUMMARY_LENGTH } from './summary-rows.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkOneOf, checkString, checkTime } from '../store/validate.js'

const FIELDS = ['id', 'projectId', 'sessionId', 'kind', 'text', 'coversUntil', 'createdAt', 'hlc', 'deletedAt'] as const
const KINDS = ['session', 'project'] as const

/** Summaries as sync mirrors them: keyed by their global id, never moved between projects. */
export const syncedSummaries: SyncedKind<SummaryRow> = {
  kind: 'summaries',
  tables: ['summaries'],
  read: (ctx, _projectId, id) => ctx.db.summaries.get(id),
  readProject: (ctx, projectId) => ctx.db.summaries.where('[projectId+createdAt]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray(),
  toRecord: (row) => ({ kind: 'summaries', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row) }),
  check(record) {
    const r = checkEnvelope(record, 'summaries', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const row: SummaryRow = {
      id: record.id,
      projectId: record.projectId,
      kind: checkOneOf('summary.kind', r.kind, KINDS),
      // The same bounds as summaries.create: a remote device gets no bigger summaries than a local call.
      text: checkString('summary.text', r.text, { nonEmpty: true, maxLength: MAX_SUMMARY_LENGTH }),
      createdAt: checkTime('summary.createdAt', r.createdAt),
      hlc: record.hlc,
    }
    if (r.sessionId !== undefined) row.sessionId = checkId('summary.sessionId', r.sessionId)
    else if (row.kind === 'session') throw invalidInput('A summary of kind "session" needs a sessionId')
    if (r.coversUntil !== undefined) row.coversUntil = checkTime('summary.coversUntil', r.coversUntil)
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('summary.deletedAt', r.deletedAt)
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await ctx.db.summaries.get(row.id)
    checkSameProject('summaries', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await ctx.db.summaries.put(row)
    await indexSummary(ctx, w, row)
    w.change('summaries', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
    return true
  },
}
