import type { DBCore, DBCoreMutateRequest, Middleware } from 'dexie'
import { formatHlc } from '../store/hlc.js'
import { legacyOrder } from './message-order.js'
import type { MessageRow, SessionRow } from '../store/rows.js'

/*
 * Message rows written without their order key and session rows written without
 * their stamp (dump import, adoption, older callers) get the legacy ones as they
 * go down to IndexedDB. A DBCore middleware rather than Dexie `creating` hooks: a hooked
 * write holds the whole transaction until it is done (and a hooked put reads
 * the stored row first), so every append waited on its own message rows before
 * anything else of it could go out. Here the rows are completed in place, as a
 * hook did, and the request goes on at once.
 */

/** The stamp given to a session stored without one: its start, as a stamp of the legacy device. */
export function legacySessionStamp(row: { startedAt: number }): string {
  return formatHlc(Math.max(0, Math.min(Math.trunc(Number(row.startedAt) || 0), 9_999_999_999_999)), 0, '0')
}

/** A session row made for messages that arrived before their session (no stamp: any real record of it wins). */
export function isPlaceholder(row: SessionRow): boolean {
  return row.placeholder === true
}

/**
 * Completes a message row without an order key: the legacy key and stamp. A row with
 * a key but no stamp is left as it is: that is how an append is stored (its stamp is
 * its key's, message-order.ts `messageStamp`), and whoever writes one raises its
 * session's `lastAt` or gives it its `hlc` (clock-restore.ts).
 */
export function fillMessage(row: MessageRow): void {
  if (row.at === undefined) Object.assign(row, legacyOrder(row))
}

/** Completes a session row without a stamp (unless it is a placeholder). */
export function fillSession(row: SessionRow): void {
  if (row.hlc === undefined && !isPlaceholder(row)) row.hlc = legacySessionStamp(row)
}

const FILLS: Readonly<Record<string, (row: never) => void>> = { messages: fillMessage, sessions: fillSession }

/**
 * The middleware that fills the rows. Above Dexie's own middlewares and the
 * at-rest encryption (slot.ts), so encryption and change tracking see the
 * completed rows; it never reads and never waits.
 */
export const legacyFillMiddleware: Middleware<DBCore> = {
  stack: 'dbcore',
  name: 'EngramLegacyFill',
  level: 3,
  create(down) {
    return {
      ...down,
      table(name) {
        const table = down.table(name)
        const fill = FILLS[name]
        if (!fill) return table
        return {
          ...table,
          mutate(req: DBCoreMutateRequest) {
            if (req.type === 'add' || req.type === 'put') for (const row of req.values) if (row !== null && typeof row === 'object') fill(row as never)
            return table.mutate(req)
          },
        }
      },
    }
  },
}
