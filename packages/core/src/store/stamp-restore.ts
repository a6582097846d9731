import { compareHlc, readHlc } from './hlc.js'

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
