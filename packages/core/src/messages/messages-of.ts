import { type Collection, Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import type { EngramDb } from '../catalog/schema.js'
import type { MessageRow } from '../store/rows.js'

/** The messages of these sessions, session by session in merged order (there is no index by project). */
export function messagesOf(db: EngramDb, sessionIds: readonly string[]): Collection<MessageRow, string> {
  if (sessionIds.length === 0) return db.messages.where(':id').anyOf([])
  return db.messages.where('[sessionId+at]').inAnyRange(
    sessionIds.map((id) => [
      [id, Dexie.minKey],
      [id, maxKey()],
    ]),
  )
}
