/**
 * Hybrid logical clock. A stamp is a string that sorts in causal-then-wall
 * order: `<physical ms, 13 digits>.<counter, 5 digits>.<deviceId>` (device id:
 * 1–64 of `[0-9A-Za-z_-]`). Every part has a fixed width, so comparing two
 * valid stamps as strings gives "latest wins, ties by device id"; stamps
 * written by earlier versions have the same format and compare the same way.
 *
 * The counter never overflows its five digits: the 100,000th tick within one
 * millisecond moves the physical part on by 1 ms instead. The physical source
 * is the device's wall clock corrected by the offset learned from the relay.
 *
 * Which record wins never depends on this clock: every device compares stamps
 * the same way. The clock only decides the stamps this device issues. A
 * received stamp moves it only when it is well-formed and leads the clock's
 * time source by at most `maxLeadMs`, so one device set to 2099 (or a stamp
 * like `9999999999999.99999.x`) cannot drag every other clock, and every later
 * edit on every key, with it. An edit of a record held at such a stamp is
 * stamped just after that record instead ({@link successorHlc}): the next edit
 * still wins, and only that record's stamps stay ahead.
 */
export interface HybridClock {
  /** A new stamp for a local event, later than every stamp issued or accepted before. */
  tick(): string
  /**
   * Advances the clock past a stamp received from another device, if it may.
   * @returns 'accepted' (the clock now is at or past it), 'malformed' or 'ahead' (the clock did not move).
   */
  receive(stamp: unknown, maxLeadMs?: number): StampVerdict
  /** The clock's time source now (epoch ms): the wall clock plus the offset learned from the relay. */
  now(): number
  /**
   * Starts the clock over from `start` (a stamp), or from its time source alone. After the time
   * source was corrected, stamps this device issued with the wrong time are no longer a floor.
   */
  rewind(start?: string): void
  readonly deviceId: string
}

/** What a clock makes of a received stamp (see {@link checkHlc}). */
export type StampVerdict = 'accepted' | 'malformed' | 'ahead'

/**
 * How far a received stamp may lead this device's clock by default: 5 minutes. A stamp further
 * ahead is still applied (the rule is the same on every device), but it does not move the clock
 * and sync lists it as `clock_ahead`; a device whose own clock is off by more shows a `clock` warning.
 */
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
  const startFrom = (stamp: string | undefined): void => {
    const parts = stamp === undefined ? undefined : readHlc(stamp)
    physical = parts?.physical ?? 0
    counter = parts?.counter ?? 0
  }
  startFrom(start)
  return {
    deviceId,
    now,
    rewind: startFrom,
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

/**
 * The stamp just after `stamp`, for this device: the next counter value at the same physical
 * time (the next millisecond when the counter is full). At the very top of the range (physical
 * 9999999999999, counter 99999) only a higher device id can follow; no honest clock gets there.
 */
export function successorHlc(stamp: string, deviceId: string): string {
  const parts = readHlc(stamp)
  if (!parts) return formatHlc(0, 0, deviceId) // a malformed stamp sorts below every valid one
  if (parts.counter < MAX_COUNTER) return formatHlc(parts.physical, parts.counter + 1, deviceId)
  if (parts.physical < MAX_PHYSICAL) return formatHlc(parts.physical + 1, 0, deviceId)
  return formatHlc(MAX_PHYSICAL, MAX_COUNTER, deviceId)
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
 * Judges a received stamp against this device's clock `now` (corrected by the relay's offset):
 * 'malformed' when it is not a stamp, 'ahead' when its physical time leads `now` by more than
 * `maxLeadMs`, else 'accepted'. Only 'malformed' keeps a record out; 'ahead' decides whether the
 * clock follows the stamp and whether sync lists the record as suspicious.
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
