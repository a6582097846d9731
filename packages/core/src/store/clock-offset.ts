import { DEFAULT_MAX_CLOCK_LEAD_MS } from './hlc.js'
import type { EngramDb } from '../catalog/schema.js'

/** The `meta` row that keeps this device's clock offset across restarts. */
export const CLOCK_OFFSET_META_KEY = 'clockOffset'

/**
 * A correction of the offset while local edits waited in the outbox: every entry
 * below `beforeSeq` was stamped with an offset `deltaMs` off the current one.
 */
export interface ClockCorrection {
  beforeSeq: number
  deltaMs: number
}

/**
 * How far this device's wall clock is from the relay's: the hybrid clock's time
 * source is `now() + ms`. Learned from the relay's time (sync), kept in `meta`.
 */
export interface ClockOffset {
  /** Relay time minus wall clock, ms (positive: this clock is slow). 0 until learned. */
  ms: number
  /** When it was last learned (wall clock, epoch ms); undefined before the first time. */
  learnedAt?: number
  /** The clock-lead bound sync ran with: beyond it the offset shows as a `clock` warning. */
  boundMs: number
  /** Corrections not yet applied to outbox entries (oldest first); the drain stamps those entries again. */
  corrections: ClockCorrection[]
}

/** The offset stored by an earlier run (none: 0, never learned). */
export async function loadClockOffset(db: EngramDb): Promise<ClockOffset> {
  const stored = (await db.meta.get(CLOCK_OFFSET_META_KEY))?.value as Partial<ClockOffset> | undefined
  const ms = typeof stored?.ms === 'number' && Number.isFinite(stored.ms) ? stored.ms : 0
  const boundMs = typeof stored?.boundMs === 'number' && stored.boundMs >= 0 ? stored.boundMs : DEFAULT_MAX_CLOCK_LEAD_MS
  const corrections = Array.isArray(stored?.corrections)
    ? stored.corrections.filter((c): c is ClockCorrection => Number.isInteger(c?.beforeSeq) && Number.isFinite(c?.deltaMs))
    : []
  return { ms, boundMs, corrections, ...(typeof stored?.learnedAt === 'number' ? { learnedAt: stored.learnedAt } : {}) }
}

/** How far the stamps of the outbox entry `seq` are from the current offset (ms to add). */
export function shiftOf(offset: ClockOffset, seq: number): number {
  let shift = 0
  for (const c of offset.corrections) if (seq < c.beforeSeq) shift += c.deltaMs
  return shift
}

/** The `clock` warning's text for an offset beyond the bound, or undefined within it. */
export function clockWarningOf(offset: ClockOffset): string | undefined {
  if (offset.learnedAt === undefined || Math.abs(offset.ms) <= offset.boundMs) return undefined
  const way = offset.ms < 0 ? 'fast' : 'slow'
  return `This device's clock is ${describeDuration(Math.abs(offset.ms))} ${way} against the relay's; sync stamps its edits with the relay's time, but set the clock right (automatic time).`
}

function describeDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1_000, 'second'],
  ]
  for (const [size, name] of units) {
    const n = Math.round(ms / size)
    if (n >= 1 && ms >= size) return `${n} ${name}${n === 1 ? '' : 's'}`
  }
  return `${Math.round(ms)} ms`
}
