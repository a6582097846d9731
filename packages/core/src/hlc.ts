/**
 * Hybrid logical clock. A timestamp is a string that sorts in causal-then-wall
 * order: `<physical ms, 13 digits>.<counter, 5 digits>.<deviceId>`. Comparing two
 * stamps as strings gives "latest wins, ties by device id".
 */
export interface HybridClock {
  /** A new stamp for a local event. */
  tick(): string
  /** Advances the clock past a stamp received from another device. */
  receive(stamp: string): void
  readonly deviceId: string
}

/** Creates a clock for one device; `now` is the wall clock. */
export function createHybridClock(deviceId: string, now: () => number, start?: string): HybridClock {
  let physical = 0
  let counter = 0
  if (start !== undefined) [physical, counter] = parseHlc(start)
  return {
    deviceId,
    tick() {
      const wall = now()
      if (wall > physical) {
        physical = wall
        counter = 0
      } else {
        counter++
      }
      return formatHlc(physical, counter, deviceId)
    },
    receive(stamp) {
      const [p, c] = parseHlc(stamp)
      if (p > physical || (p === physical && c > counter)) {
        physical = p
        counter = c
      }
    },
  }
}

/** Formats the parts of a stamp. */
export function formatHlc(physical: number, counter: number, deviceId: string): string {
  return `${String(physical).padStart(13, '0')}.${String(counter).padStart(5, '0')}.${deviceId}`
}

/** Reads the physical time and counter of a stamp. */
export function parseHlc(stamp: string): [physical: number, counter: number] {
  const [p, c] = stamp.split('.', 2)
  return [Number(p) || 0, Number(c) || 0]
}

/** Orders two stamps: negative when `a` is older. A missing stamp is oldest. */
export function compareHlc(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0
  if (a === undefined) return -1
  if (b === undefined) return 1
  return a < b ? -1 : 1
}
