import { expect, it } from 'vitest'
import { createKeyedRateLimiter, createRateLimiter } from './limits.js'

it('allows a burst, then the sustained rate', () => {
  let now = 0
  const limiter = createRateLimiter(10, 5, () => now)
  expect(Array.from({ length: 6 }, () => limiter.take())).toEqual([true, true, true, true, true, false])
  now += 100 // one token refilled at 10/s
  expect(limiter.take()).toBe(true)
  expect(limiter.take()).toBe(false)
  now += 10_000
  expect(Array.from({ length: 6 }, () => limiter.take()).filter(Boolean)).toHaveLength(5)
})

it('keeps one bucket per key', () => {
  let now = 0
  const limiter = createKeyedRateLimiter(1, 2, () => now)
  expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([true, true, false])
  expect(limiter.take('b')).toBe(true)
  now += 1000
  expect(limiter.take('a')).toBe(true)
  expect(limiter.size()).toBe(2)
})
