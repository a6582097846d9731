import { Dexie } from 'dexie'
import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { maxKey } from '../store/keys.js'
import type { SessionRow } from '../store/rows.js'
import { purgeSessionMessages } from './session-purge.js'
import { MAX_CHANNEL_LENGTH, MAX_TITLE_LENGTH } from './sessions.js'
import { MAX_SUMMARY_LENGTH } from '../summaries/summary-rows.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkOneOf, checkString, checkTime } from '../store/validate.js'

const FIELDS = ['id', 'projectId', 'title', 'channel', 'status', 'summary', 'startedAt', 'lastActiveAt', 'closedAt', 'personId', 'hlc', 'purged'] as const
const STATUSES = ['active', 'closed'] as const
/** Device-local fields: the arrival counter, the placeholder marker and the stamp of this device's stored messages (clock-restore.ts). */
const LOCAL_FIELDS = ['lastSeq', 'placeholder', 'lastAt']

/**
 * Sessions as sync mirrors them (projects with `sync.messages`): title, status,
 * summary and times travel in the project document, last-writer-wins by HLC;
 * `lastSeq` stays on the device and `lastActiveAt` only moves forward. A purge
 * travels as a content-free tombstone (`purged: true`) and is final: applied, it
 * removes the session's messages, and nothing brings the session back.
 */
export const syncedSessions: SyncedKind<SessionRow> = {
  kind: 'sessions',
  tables: ['sessions', 'messages'],
  read: (ctx, _projectId, id) => ctx.db.sessions.get(id).then((row) => (row?.placeholder ? undefined : row)),
  readProject: async (ctx, projectId) =>
    (await ctx.db.sessions.where('[projectId+lastActiveAt]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray()).filter(
      (row) => !row.placeholder,
    ),
  toRecord: (row) => ({ kind: 'sessions', projectId: row.projectId, id: row.id, hlc: row.hlc!, row: travelling(row, LOCAL_FIELDS) }),
  check(record) {
    const r = checkEnvelope(record, 'sessions', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const row: SessionRow = {
      id: record.id,
      projectId: record.projectId,
      status: checkOneOf('session.status', r.status, STATUSES),
      startedAt: checkTime('session.startedAt', r.startedAt),
      lastActiveAt: checkTime('session.lastActiveAt', r.lastActiveAt),
      lastSeq: 0,
      hlc: record.hlc,
    }
    // The same bounds as sessions.create and sessions.close.
    if (r.title !== undefined) row.title = checkString('session.title', r.title, { maxLength: MAX_TITLE_LENGTH })
    if (r.channel !== undefined) row.channel = checkString('session.channel', r.channel, { maxLength: MAX_CHANNEL_LENGTH })
    if (r.summary !== undefined) row.summary = checkString('session.summary', r.summary, { nonEmpty: true, maxLength: MAX_SUMMARY_LENGTH })
    if (r.closedAt !== undefined) row.closedAt = checkTime('session.closedAt', r.closedAt)
    if (r.personId !== undefined) row.personId = checkId('session.personId', r.personId)
    if (r.purged !== undefined) {
      if (r.purged !== true || row.status !== 'closed' || row.title !== undefined || row.summary !== undefined || row.channel !== undefined)
        throw invalidInput('A purged session record carries no content: purged true, status closed, no title, channel or summary')
      row.purged = true
    }
    return row
  },
  async apply(ctx, w, row) {
    const stored = await ctx.db.sessions.get(row.id)
    checkSameProject('sessions', row.id, stored, row.projectId)
    // A purge is final; a placeholder (messages that came first) gives way to any record.
    if (stored?.purged) return false
    if (stored && !stored.placeholder && compareHlc(row.hlc, stored.hlc) <= 0) return false
    const next: SessionRow = { ...row, lastSeq: stored?.lastSeq ?? 0, lastActiveAt: Math.max(row.lastActiveAt, stored?.lastActiveAt ?? 0) }
    // It stands for the stamps of the stored messages without their own (a placeholder's too).
    if (stored?.lastAt !== undefined) next.lastAt = stored.lastAt
    if (row.purged) await purgeSessionMessages(ctx, w, row.id, row.projectId)
    await ctx.db.sessions.put(next)
    w.change('sessions', row.purged ? 'delete' : 'put', row.id, row.projectId)
    return true
  },
}
