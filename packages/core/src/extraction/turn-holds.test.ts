import { describe, expect, it } from 'vitest'
import { createTurnHolds } from './turn-holds.js'

/** A later macrotask: whatever was due before it has happened once it resolves. */
const marker = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

describe('turn holds', () => {
  it('whenIdle waits for the project turn in flight, not for other projects', async () => {
    const holds = createTurnHolds()
    holds.hold('p', 's\u0001a')
    let idle = false
    const waiting = holds.whenIdle('p', 60_000).then(() => (idle = true))
    await holds.whenIdle('other', 60_000)
    await marker()
    expect(idle).toBe(false)
    holds.release('p', 's\u0001a')
    await waiting
    expect(idle).toBe(true)
  })

  it('a later turn of a session releases the earlier ones; a hold older than maxMs holds nothing', async () => {
    let now = 1_000
    const holds = createTurnHolds(() => now)
    holds.hold('p', 's\u0001a')
    holds.hold('p', 's\u0001b')
    holds.hold('p', 't\u0001c')
    holds.releaseOthers('p', 's\u0001', 's\u0001b')
    holds.release('p', 't\u0001c')
    let idle = false
    const waiting = holds.whenIdle('p', 5_000).then(() => (idle = true))
    await marker()
    expect(idle).toBe(false)
    holds.release('p', 's\u0001b')
    await waiting
    holds.hold('p', 's\u0001d')
    now += 5_001
    await holds.whenIdle('p', 5_000)
  })

  it('clear wakes every waiter (the store closed)', async () => {
    const holds = createTurnHolds()
    holds.hold('p', 'k')
    const waiting = holds.whenIdle('p', 60_000)
    holds.clear()
    await waiting
  })
})
