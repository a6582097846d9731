import { compareHlc, DEFAULT_MAX_CLOCK_LEAD_MS, readHlc } from '../store/hlc.js'
import type { EngramDb } from '../catalog/schema.js'
import { MIRRORED_KINDS } from '../catalog/lists.js'

export { RESTORE_MAX_LEAD_MS, raisedLastAt, restorable } from '../store/stamp-restore.js'

/** What {@link highestStoredStamp} restores from. */
export interface RestoreOptions {
  /** How far ahead of `now` a stamp may be (default 5 minutes, sync's clock-lead bound). */
  maxLeadMs?: number
  /** How far ahead a stamp of `deviceId` may be (default `maxLeadMs`). */
  ownLeadMs?: number
  deviceId?: string
  /** Stamps left out. */
  skip?: ReadonlySet<string>
}

/**
 * The highest well-formed stamp stored in the mirrored tables and the outbox,
 * so a reopened store's clock starts after every stamp it issued or accepted
 * (a clock started from the wall clock alone would stamp a restarted device's
 * edit below a remote stamp it already holds, and the edit would lose). Message
 * rows stored without their own `hlc` (appends: message-order.ts `messageStamp`)
 * are not in the `hlc` index; their session's `lastAt` stands for them.
 * Malformed stamps, stamps more than `maxLeadMs` ahead of `now` (the clock, corrected by the
 * relay's offset) and the stamps in `skip` (this device's edits about to be stamped again) are
 * skipped: a stamp from a clock far ahead is applied like any other, but it does not set the clock.
 * Message and session stamps of `deviceId` (this device's own) count up to `ownLeadMs` ahead:
 * after the wall clock was set back, a conversation still goes on after what this device wrote
 * in it. (A keyed record needs no more: an edit is stamped after the stamp of the record it
 * replaces, whatever the clock.)
 * @returns undefined when nothing is stored.
 */
export async function highestStoredStamp(db: EngramDb, now: number, options: RestoreOptions = {}): Promise<string | undefined> {
  const { maxLeadMs = DEFAULT_MAX_CLOCK_LEAD_MS, ownLeadMs = maxLeadMs, deviceId, skip } = options
  const takes = (stamp: unknown, conversation = false): stamp is string => {
    const parts = readHlc(stamp)
    if (parts === undefined || skip?.has(stamp as string)) return false
    return parts.physical - now <= (conversation && parts.deviceId === deviceId ? Math.max(ownLeadMs, maxLeadMs) : maxLeadMs)
  }
  let highest: string | undefined
  const see = (stamp: unknown, conversation = false): void => {
    if (takes(stamp, conversation) && compareHlc(stamp, highest) > 0) highest = stamp
  }
  const tables = [...MIRRORED_KINDS, 'outbox']
  await db.transaction('r', [...tables, 'sessions', 'messages'], async () => {
    await Promise.all([
      ...tables.map((t) => db.table(t).each((row: { hlc?: unknown }) => see(row.hlc))),
      db.sessions.each((row) => {
        see(row.hlc, true)
        see(row.lastAt, true)
      }),
    ])
    // Messages may be many: walk their stamps from the highest down to the first one restored.
    await db.messages
      .orderBy('hlc')
      .reverse()
      .until((row) => takes(row.hlc, true), true)
      .each((row) => see(row.hlc, true))
  })
  return highest
}
