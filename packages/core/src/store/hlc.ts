/**
 * Hybrid logical clock. A stamp is a string that sorts in causal-then-wall
 * order: `<physical ms, 13 digits>.<counter, 5 digits>.<deviceId>` (device id:
 * 1–64 of `[0-9A-Za-z_-]`). Every part has a fixed width, so comparing two
 * valid stamps as strings gives "latest wins, ties by device id"; stamps
 * written by earlier versions have the same format and compare the same way.
 *
 * The counter never overflows its five digits: the 100,000th tick within one
 * millisecond moves the physical part on by 1 ms instead. A received stamp
 * moves the clock only when it is well-formed and leads this device's wall
 * clock by at most `maxLeadMs`, so one device set to 2099 (or a stamp like
 * `9999999999999.99999.x`) cannot drag every other clock with it.
 */
export interface HybridClock {
  /** A new stamp for a local event, later than every stamp issued or accepted before. */
  tick(): string
  /**
   * Advances the clock past a stamp received from another device, if it may.
   * @returns 'accepted' (the clock now is at or past it), 'malformed' or 'ahead' (ignored).
   */
  receive(stamp: unknown, maxLeadMs?: number): StampVerdict
  readonly deviceId: string
}

/** What a clock makes of a received stamp (see {@link checkHlc}). */
export type StampVerdict = 'accepted' | 'malformed' | 'ahead'

/** How far a received stamp may lead this device's wall clock by default: 5 minutes. */
export const DEFAULT_MAX_CLOCK_LEAD_MS = 5 * 60_000

/** The counter's five digits. */
const MAX_COUNTER = 99_999
/** The physical part's thirteen digits (year 2286). */
const MAX_PHYSICAL = 9_999_999_999_999
const STAMP = /^(\d{13})\.(\d{5})\.([0-9A-Za-z_-]{1,64})$/
/** The same shape without captures (a faster test on the write path). */
const STAMP_SHAPE = /^\d{13}\.\d{5}\.[0-9A-Za-z_-]{1,64}$/

/** The parts of a well-formed stamp. */
export interface HlcParts {
  physical: number
  counter: number
  deviceId: string
}

/**
 * Creates a clock for one device; `now` is the wall clock. `start` (a stamp,
 * e.g. the highest one stored) makes every later tick sort after it.
 */
export function createHybridClock(deviceId: string, now: () => number, start?: string): HybridClock {
  let physical = 0
  let counter = 0
  const startParts = start === undefined ? undefined : readHlc(start)
  if (startParts) ({ physical, counter } = startParts)
  return {
    deviceId,
    tick() {
      const wall = now()
      if (wall > physical) {
        physical = Math.min(wall, MAX_PHYSICAL)
        counter = 0
      } else if (counter < MAX_COUNTER) {
        counter++
      } else {
        // Borrow the next millisecond rather than wrap the counter (a wrapped stamp would sort first).
        physical = Math.min(physical + 1, MAX_PHYSICAL)
        counter = 0
      }
      return formatHlc(physical, counter, deviceId)
    },
    receive(stamp, maxLeadMs = DEFAULT_MAX_CLOCK_LEAD_MS) {
      const verdict = checkHlc(stamp, now(), maxLeadMs)
      if (verdict !== 'accepted') return verdict
      const parts = readHlc(stamp)!
      if (parts.physical > physical || (parts.physical === physical && parts.counter > counter)) {
        physical = parts.physical
        counter = parts.counter
      }
      return verdict
    },
  }
}

/** Formats the parts of a stamp. */
export function formatHlc(physical: number, counter: number, deviceId: string): string {
  return `${String(physical).padStart(13, '0')}.${String(counter).padStart(5, '0')}.${deviceId}`
}

/** Reads a stamp strictly. @returns undefined when it is not a well-formed stamp. */
export function readHlc(stamp: unknown): HlcParts | undefined {
  if (typeof stamp !== 'string') return undefined
  const m = STAMP.exec(stamp)
  if (!m) return undefined
  return { physical: Number(m[1]), counter: Number(m[2]), deviceId: m[3]! }
}

/** Whether `stamp` is a well-formed HLC stamp. */
export function isHlc(stamp: unknown): stamp is string {
  return typeof stamp === 'string' && STAMP_SHAPE.test(stamp)
}

/**
 * Judges a received stamp against this device's wall clock `now`: 'malformed'
 * when it is not a stamp, 'ahead' when its physical time leads `now` by more
 * than `maxLeadMs`, else 'accepted'.
 */
export function checkHlc(stamp: unknown, now: number, maxLeadMs: number = DEFAULT_MAX_CLOCK_LEAD_MS): StampVerdict {
  if (!isHlc(stamp)) return 'malformed'
  return Number(stamp.slice(0, 13)) - now > maxLeadMs ? 'ahead' : 'accepted'
}

/** Reads the physical time and counter of a stamp (0, 0 when it is malformed). */
export function parseHlc(stamp: string): [physical: number, counter: number] {
  const parts = readHlc(stamp)
  return parts ? [parts.physical, parts.counter] : [0, 0]
}

/**
 * Orders two stamps: negative when `a` is older. A missing stamp is oldest,
 * then malformed ones (so `"~"` never beats a real stamp), then valid stamps
 * in string order.
 */
export function compareHlc(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0
  const rank = (s: string | undefined): number => (s === undefined ? 0 : isHlc(s) ? 2 : 1)
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  return a! < b! ? -1 : 1
}
