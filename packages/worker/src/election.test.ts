import { describe, expect, it } from 'vitest'
import { electLeader } from '@engram/worker'
import { fakeLocks } from '../test/fake-locks.js'

const tick = () => new Promise((r) => setTimeout(r, 5))

describe('electLeader', () => {
  it('elects exactly one leader and hands over when it resigns', async () => {
    const locks = fakeLocks()
    const log: string[] = []
    const a = electLeader('sync', {
      locks,
      onLead: () => {
        log.push('a leads')
        return () => log.push('a stops')
      },
    })
    const b = electLeader('sync', {
      locks,
      onLead: () => {
        log.push('b leads')
        return () => log.push('b stops')
      },
    })
    await tick()
    expect([a.isLeader, b.isLeader]).toEqual([true, false])
    const changes: boolean[] = []
    b.onChange((leader) => changes.push(leader))
    a.resign()
    await tick()
    expect([a.isLeader, b.isLeader]).toEqual([false, true])
    expect(changes).toEqual([true])
    expect(log).toEqual(['a leads', 'a stops', 'b leads'])
    b.resign()
    b.resign()
    expect(log.at(-1)).toBe('b stops')
  })

  it('drops a queued claim on resign, so it never leads', async () => {
    const locks = fakeLocks()
    const a = electLeader('x', { locks, onLead: () => () => {} })
    let bLed = false
    const b = electLeader('x', {
      locks,
      onLead: () => {
        bLed = true
        return () => {}
      },
    })
    await tick()
    b.resign()
    a.resign()
    await tick()
    expect(bLed).toBe(false)
  })

  it('leads at once without Web Locks (Node)', () => {
    const e = electLeader('y', { locks: undefined, onLead: () => () => {} })
    expect(e.isLeader).toBe(true)
    e.resign()
    expect(e.isLeader).toBe(false)
  })
})
