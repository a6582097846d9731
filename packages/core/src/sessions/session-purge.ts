import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import type { SessionRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import type { WriteScope } from '../store/write.js'
import { purgeObservations, sessionObservations } from '../observations/observation-writes.js'

/** Tables a session purge writes (with the search index's). */
export const PURGE_TABLES = ['sessions', 'messages', 'observations'] as const

/**
 * Removes every message of a session and its search-index documents inside the
 * caller's write; changes are emitted as message deletes. The session's observations
 * (what an observer wrote of those messages) are purged with them.
 * @returns how many messages were removed.
 */
export async function purgeSessionMessages(ctx: StoreContext, w: WriteScope, sessionId: string, projectId: string): Promise<number> {
  const ids = await ctx.db.messages.where('[sessionId+seq]').between([sessionId, Dexie.minKey], [sessionId, maxKey()]).primaryKeys()
  await ctx.db.messages.bulkDelete(ids)
  for (const id of ids) {
    await ctx.index.remove(w, `message:${id}`)
    w.change('messages', 'delete', id, projectId)
  }
  await purgeObservations(ctx, w, await sessionObservations(ctx, sessionId), ctx.now())
  return ids.length
}

/**
 * The tombstone a purged session leaves in a project whose conversations sync:
 * no title, summary or messages, only what tells other devices to purge it too.
 */
export function purgedSession(row: SessionRow, hlc: string): SessionRow {
  return {
    id: row.id,
    projectId: row.projectId,
    status: 'closed',
    startedAt: row.startedAt,
    lastActiveAt: row.lastActiveAt,
    lastSeq: row.lastSeq,
    hlc,
    purged: true,
  }
}
