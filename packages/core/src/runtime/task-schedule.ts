/** Calendar arithmetic for repeating tasks and retry backoff. Calendar math is in UTC. */

/** How a task repeats. */
export type Repeat = 'daily' | 'weekly' | 'monthly' | null

const DAY = 86_400_000

/** Base delay of the first retry after `tasks.fail`; doubles each retry. */
export const RETRY_BASE_MS = 60_000
/** Longest delay between retries. */
export const RETRY_MAX_MS = 3_600_000

/**
 * The next occurrence after `dueAt`. Monthly keeps the day of month of `anchorDay`
 * (the day the task was first due), clamped to the month's last day, so a task due on
 * Jan 31 runs on Feb 28 (or 29), then Mar 31, Apr 30, …
 */
export function nextOccurrence(dueAt: number, repeat: Exclude<Repeat, null>, anchorDay: number): number {
  if (repeat === 'daily') return dueAt + DAY
  if (repeat === 'weekly') return dueAt + 7 * DAY
  const d = new Date(dueAt)
  const year = d.getUTCFullYear()
  const month = d.getUTCMonth() + 1
  const day = Math.min(anchorDay, daysInMonth(year, month))
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}

/** The first occurrence strictly after `now`, stepping from `dueAt` (missed runs are skipped). */
export function nextOccurrenceAfter(dueAt: number, repeat: Exclude<Repeat, null>, anchorDay: number, now: number): number {
  let next = nextOccurrence(dueAt, repeat, anchorDay)
  while (next <= now) next = nextOccurrence(next, repeat, anchorDay)
  return next
}

/** The UTC day of month of a time (1–31): the anchor of monthly repeats. */
export function dayOfMonth(time: number): number {
  return new Date(time).getUTCDate()
}

/** Delay before retry number `retries` (1-based): base × 2^(retries−1), capped. */
export function retryDelay(retries: number, baseMs = RETRY_BASE_MS): number {
  return Math.min(RETRY_MAX_MS, baseMs * 2 ** Math.max(0, retries - 1))
}

function daysInMonth(year: number, monthIndex: number): number {
  // Day 0 of the following month is the last day of this one.
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate()
}
