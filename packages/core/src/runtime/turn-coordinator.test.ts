import { describe, expect, it } from 'vitest'
import { createTurnCoordinator } from './turn-coordinator.js'

describe('turn coordinator', () => {
  it('shares in-flight calls and reuses results within the TTL', async () => {
    let t = 0
    const c = createTurnCoordinator({ ttlMs: 100, maxEntries: 10 }, () => t)
    let calls = 0
    const fn = async () => ++calls
    expect(await Promise.all([c.run('k', fn), c.run('k', fn)])).toEqual([1, 1])
    t = 100
    expect(await c.run('k', fn)).toBe(1)
    t = 201
    expect(await c.run('k', fn)).toBe(2)
  })

  it('with reuse: false shares only in-flight calls', async () => {
    const c = createTurnCoordinator({ ttlMs: 1000, maxEntries: 10 }, () => 0)
    let calls = 0
    const fn = async () => ++calls
    expect(await Promise.all([c.run('k', fn, { reuse: false }), c.run('k', fn, { reuse: false })])).toEqual([1, 1])
    expect(c.size).toBe(0)
    expect(await c.run('k', fn, { reuse: false })).toBe(2)
  })

  it('does not keep failures', async () => {
    const c = createTurnCoordinator({ ttlMs: 1000, maxEntries: 10 }, () => 0)
    await expect(
      c.run('k', async () => {
        throw new Error('x')
      }),
    ).rejects.toThrow('x')
    expect(c.size).toBe(0)
    expect(await c.run('k', async () => 'ok')).toBe('ok')
  })

  it('holds at most maxEntries keys and drops expired ones', async () => {
    let t = 0
    const c = createTurnCoordinator({ ttlMs: 50, maxEntries: 3 }, () => t)
    for (let i = 0; i < 10; i++) await c.run(`k${i}`, async () => i)
    expect(c.size).toBe(3)
    t = 100
    await c.run('fresh', async () => 0)
    expect(c.size).toBe(1)
    c.clear()
    expect(c.size).toBe(0)
  })
})
