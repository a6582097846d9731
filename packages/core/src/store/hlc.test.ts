import { describe, expect, it } from 'vitest'
import { checkHlc, compareHlc, createHybridClock, DEFAULT_MAX_CLOCK_LEAD_MS, formatHlc, isHlc, readHlc, successorHlc } from './hlc.js'

const T = Date.UTC(2026, 0, 1)

describe('hybrid logical clock', () => {
  it('the 100,000th tick in one millisecond still sorts after the one before', () => {
    const clock = createHybridClock('dev', () => T)
    let previous = clock.tick()
    for (let i = 1; i <= 100_001; i++) {
      const stamp = clock.tick()
      if (stamp <= previous) throw new Error(`tick ${i} (${stamp}) does not sort after ${previous}`)
      previous = stamp
    }
    expect(readHlc(previous)).toEqual({ physical: T + 1, counter: 1, deviceId: 'dev' })
  })

  it('a received stamp with a full counter does not freeze the clock', () => {
    const clock = createHybridClock('dev', () => T)
    const full = formatHlc(T, 99_999, 'other')
    expect(clock.receive(full)).toBe('accepted')
    const next = clock.tick()
    expect(compareHlc(next, full)).toBeGreaterThan(0)
    expect(compareHlc(clock.tick(), next)).toBeGreaterThan(0)
  })

  it('ignores `9999999999999.99999.x` and other stamps far ahead of the wall clock', () => {
    const clock = createHybridClock('dev', () => T)
    expect(clock.receive('9999999999999.99999.x')).toBe('ahead')
    expect(clock.receive(formatHlc(T + DEFAULT_MAX_CLOCK_LEAD_MS + 1, 0, 'fast'))).toBe('ahead')
    expect(readHlc(clock.tick())?.physical).toBe(T)
    // within the bound the clock follows; a larger bound can be asked for
    expect(clock.receive(formatHlc(T + DEFAULT_MAX_CLOCK_LEAD_MS, 0, 'fast'))).toBe('accepted')
    expect(readHlc(clock.tick())?.physical).toBe(T + DEFAULT_MAX_CLOCK_LEAD_MS)
    expect(clock.receive(formatHlc(T + 15 * 60_000, 0, 'fast'), 20 * 60_000)).toBe('accepted')
    expect(readHlc(clock.tick())?.physical).toBe(T + 15 * 60_000)
  })

  it('rejects malformed stamps and never lets them beat a real one', () => {
    const clock = createHybridClock('dev', () => T)
    for (const bad of ['~', '', 'x.y.z', `${T}.0.dev`, `${T}.00000.`, `${T}.00000.dev.extra`, `0${T}.00000.dev`, `${T}.00000.de v`, `${T}.000000.dev`]) {
      expect(isHlc(bad), bad).toBe(false)
      expect(clock.receive(bad), bad).toBe('malformed')
      expect(compareHlc(bad, formatHlc(0, 0, 'a')), bad).toBeLessThan(0)
      expect(compareHlc(formatHlc(0, 0, 'a'), bad), bad).toBeGreaterThan(0)
    }
    expect(checkHlc(42, T)).toBe('malformed')
    expect(compareHlc('~', undefined)).toBeGreaterThan(0)
    expect(readHlc(clock.tick())?.physical).toBe(T)
  })

  it('starts after a given stamp (restored from the highest stored) even when the wall clock is behind it', () => {
    const stored = formatHlc(T + 10 * 60_000, 4, 'fastdevice')
    const clock = createHybridClock('slow', () => T, stored)
    expect(compareHlc(clock.tick(), stored)).toBeGreaterThan(0)
  })

  it('orders valid stamps by time, counter, then device id (the documented format)', () => {
    const stamps = [formatHlc(T, 1, 'a'), formatHlc(T, 0, 'b'), formatHlc(T + 1, 0, 'a'), formatHlc(T, 0, 'a')]
    expect([...stamps].sort(compareHlc)).toEqual([formatHlc(T, 0, 'a'), formatHlc(T, 0, 'b'), formatHlc(T, 1, 'a'), formatHlc(T + 1, 0, 'a')])
    expect(formatHlc(T, 7, 'dev')).toBe(`${T}.00007.dev`)
  })

  it('the successor of a stamp sorts right after it, for this device, up to the top of the range', () => {
    const far = formatHlc(Date.UTC(2099, 0, 1), 7, 'zzz')
    expect(successorHlc(far, 'dev')).toBe(formatHlc(Date.UTC(2099, 0, 1), 8, 'dev'))
    expect(compareHlc(successorHlc(far, 'dev'), far)).toBeGreaterThan(0)
    expect(successorHlc(formatHlc(T, 99_999, 'x'), 'dev')).toBe(formatHlc(T + 1, 0, 'dev'))
    // the very top: only a higher device id follows (no honest clock gets there)
    expect(successorHlc('9999999999999.99999.x', 'dev')).toBe('9999999999999.99999.dev')
    expect(compareHlc(successorHlc('9999999999999.99999.a', 'dev'), '9999999999999.99999.a')).toBeGreaterThan(0)
  })

  it('rewinds: after a correction of its time source the clock no longer stays at stamps it issued with the wrong time', () => {
    let offset = 10 * 60_000
    const clock = createHybridClock('dev', () => T + offset)
    expect(readHlc(clock.tick())?.physical).toBe(T + offset)
    offset = 0
    expect(readHlc(clock.tick())?.physical).toBe(T + 10 * 60_000) // a clock never goes back by itself
    clock.rewind(formatHlc(T - 5, 0, 'other'))
    expect(clock.now()).toBe(T)
    expect(readHlc(clock.tick())?.physical).toBe(T)
    clock.rewind(formatHlc(T + 3, 2, 'other'))
    expect(clock.tick()).toBe(formatHlc(T + 3, 3, 'dev'))
  })
})
