import { Dexie } from 'dexie'
import type { SessionRow } from '../store/rows.js'
import { PURGE_TABLES, purgedSession, purgeSessionMessages } from './session-purge.js'
import { requireSession, toSession } from './session-rows.js'
import type { SessionsApi } from './sessions.js'
import type { StoreContext } from '../store/store-context.js'
import { MAX_SUMMARY_LENGTH, storeSummary } from '../summaries/summary-rows.js'
import { checkId, checkNumber, checkOptions, checkString } from '../store/validate.js'
import { read, write } from '../store/write.js'

/** `sessions.close`, `reopen`, `idle` and `purge`: loaded on the first of them. */
export function createSessionLifecycle(ctx: StoreContext): Pick<SessionsApi, 'close' | 'reopen' | 'idle' | 'purge'> {
  const { db } = ctx
  const closeTables = ['sessions', 'summaries', ...ctx.index.tables]

  return {
    async close(id, options) {
      checkId('id', id)
      const { summary } = checkOptions('options', options, ['summary'])
      if (summary !== undefined) checkString('summary', summary, { nonEmpty: true, maxLength: MAX_SUMMARY_LENGTH })
      return write(ctx, closeTables, async (w) => {
        const row = await requireSession(ctx, id)
        if (row.status === 'closed') return false
        const now = ctx.now()
        const next: SessionRow = { ...row, status: 'closed', closedAt: now, hlc: w.hlc(row.hlc) }
        if (summary !== undefined) {
          next.summary = summary
          await storeSummary(ctx, w, { projectId: row.projectId, sessionId: id, kind: 'session', text: summary, coversUntil: row.lastActiveAt })
        }
        await db.sessions.put(next)
        w.change('sessions', 'put', id, row.projectId)
        return true
      })
    },

    async reopen(id) {
      checkId('id', id)
      return write(ctx, ['sessions'], async (w) => {
        const row = await requireSession(ctx, id)
        if (row.status === 'active') return false
        const { closedAt: _closedAt, ...rest } = row
        await db.sessions.put({ ...rest, status: 'active', lastActiveAt: Math.max(row.lastActiveAt, ctx.now()), hlc: w.hlc(row.hlc) })
        w.change('sessions', 'put', id, row.projectId)
        return true
      })
    },

    async idle(olderThanMs) {
      checkNumber('olderThanMs', olderThanMs, { min: 0 })
      const cutoff = ctx.now() - olderThanMs
      const rows = await read(ctx, ['sessions'], () =>
        db.sessions.where('[status+lastActiveAt]').between(['active', Dexie.minKey], ['active', cutoff], true, false).toArray(),
      )
      return rows.map(toSession)
    },

    async purge(id) {
      checkId('id', id)
      return write(ctx, [...PURGE_TABLES, ...ctx.index.tables], async (w) => {
        const row = await requireSession(ctx, id)
        const removed = await purgeSessionMessages(ctx, w, id, row.projectId)
        // Where conversations sync, the tombstone carries the purge to every device (and beats older states).
        if (ctx.conversationProjects.has(row.projectId)) await db.sessions.put(purgedSession(row, w.hlc(row.hlc)))
        else await db.sessions.delete(id)
        w.change('sessions', 'delete', id, row.projectId)
        return removed
      })
    },
  }
}
