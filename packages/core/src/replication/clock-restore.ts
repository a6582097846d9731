import { compareHlc, readHlc } from '../store/hlc.js'
import type { EngramDb } from '../store/schema.js'
import { MIRRORED_KINDS } from './mirrored-kinds.js'

/**
 * Stored stamps leading the wall clock by more than this are not restored: they
 * predate the drift bound (a device once set to 2099) and would freeze the clock.
 * Any drift bound sync is configured with up to this is honoured across restarts.
 */
export const RESTORE_MAX_LEAD_MS = 24 * 60 * 60_000

/** True for a well-formed stamp that a restore at `now` takes (not more than {@link RESTORE_MAX_LEAD_MS} ahead). */
export function restorable(stamp: unknown, now: number): stamp is string {
  const parts = readHlc(stamp)
  return parts !== undefined && parts.physical - now <= RESTORE_MAX_LEAD_MS
}

/**
 * A session's `lastAt` raised to `stamp`, the stamp of a message row of it stored
 * without its own `hlc`. A stored `lastAt` that a restore at `now` would skip gives
 * way even to a lower stamp: kept, it would hide every later append of the session
 * from the restore (one value stands for all of them).
 */
export function raisedLastAt(lastAt: string | undefined, stamp: string, now: number): string {
  return lastAt !== undefined && restorable(lastAt, now) && compareHlc(lastAt, stamp) >= 0 ? lastAt : stamp
}

/**
 * The highest well-formed stamp stored in the mirrored tables and the outbox,
 * so a reopened store's clock starts after every stamp it issued or accepted
 * (a clock started from the wall clock alone would stamp a restarted device's
 * edit below a remote stamp it already holds, and the edit would lose). Message
 * rows stored without their own `hlc` (appends: message-order.ts `messageStamp`)
 * are not in the `hlc` index; their session's `lastAt` stands for them.
 * Malformed stamps and stamps more than {@link RESTORE_MAX_LEAD_MS} ahead of `now` are skipped.
 * @returns undefined when nothing is stored.
 */
export async function highestStoredStamp(db: EngramDb, now: number): Promise<string | undefined> {
  let highest: string | undefined
  const see = (stamp: unknown): void => {
    if (restorable(stamp, now) && compareHlc(stamp, highest) > 0) highest = stamp
  }
  const tables = [...MIRRORED_KINDS, 'outbox']
  await db.transaction('r', [...tables, 'sessions', 'messages'], async () => {
    await Promise.all([
      ...tables.map((t) => db.table(t).each((row: { hlc?: unknown }) => see(row.hlc))),
      db.sessions.each((row) => {
        see(row.hlc)
        see(row.lastAt)
      }),
    ])
    // Messages may be many: walk their stamps from the highest down to the first one restored.
    await db.messages
      .orderBy('hlc')
      .reverse()
      .until((row) => restorable(row.hlc, now), true)
      .each((row) => see(row.hlc))
  })
  return highest
}
