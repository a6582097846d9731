import { compareHlc, readHlc } from './hlc.js'

/**
 * The furthest lead of a stored stamp that message rows keep their session's `lastAt` for
 * (message-order.ts): a stamp further ahead (a device once set to 2099) keeps its own `hlc`.
 * The clock itself restores only from stamps within sync's clock-lead bound.
 */
export const RESTORE_MAX_LEAD_MS = 24 * 60 * 60_000

/** True for a well-formed stamp that leads `now` by at most `maxLeadMs` (default {@link RESTORE_MAX_LEAD_MS}). */
export function restorable(stamp: unknown, now: number, maxLeadMs = RESTORE_MAX_LEAD_MS): stamp is string {
  const parts = readHlc(stamp)
  return parts !== undefined && parts.physical - now <= maxLeadMs
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
