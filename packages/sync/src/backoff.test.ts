import { describe, expect, it } from 'vitest'
import { backoffDelay } from '@engram/sync'

describe('backoffDelay', () => {
  it('doubles the window per attempt, caps it, and jitters within its upper half', () => {
    expect(backoffDelay(1, { initialMs: 100 }, () => 0)).toBe(50)
    expect(backoffDelay(1, { initialMs: 100 }, () => 1)).toBe(100)
    expect(backoffDelay(3, { initialMs: 100 }, () => 0.5)).toBe(300)
    expect(backoffDelay(30, { initialMs: 100, maxMs: 1000 }, () => 1)).toBe(1000)
    const samples = Array.from({ length: 200 }, () => backoffDelay(4))
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(1000)
    expect(Math.max(...samples)).toBeLessThanOrEqual(2000)
    expect(new Set(samples).size).toBeGreaterThan(100)
  })
})
