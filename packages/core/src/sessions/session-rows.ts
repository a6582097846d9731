import type { Session } from './sessions.js'
import { MemoryError } from '../store/errors.js'
import type { SessionRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'

/** Longest session title, in characters. */
export const MAX_TITLE_LENGTH = 1_000

/** Longest channel name, in characters. */
export const MAX_CHANNEL_LENGTH = 200

/** The public shape of a stored session (drops the internal `lastSeq`, stamps and markers). */
export function toSession(row: SessionRow): Session {
  const { lastSeq: _lastSeq, hlc: _hlc, lastAt: _lastAt, purged: _purged, placeholder: _placeholder, ...session } = row
  return session
}

/**
 * Loads a session inside a transaction.
 * @throws MemoryError `not_found` when there is no such session.
 */
export async function requireSession(ctx: StoreContext, id: string): Promise<SessionRow> {
  const row = await ctx.db.sessions.get(id)
  if (!row || row.purged) throw new MemoryError('not_found', `No session with id ${JSON.stringify(id)}; create one with memory.sessions.create()`)
  return row
}

/** Rejects a session that cannot take messages. @throws MemoryError `conflict` for a closed session. */
export function assertActive(row: SessionRow): void {
  if (row.status !== 'active') {
    throw new MemoryError('conflict', `Session ${JSON.stringify(row.id)} is closed; reopen it with memory.sessions.reopen() or create a new one`)
  }
}
