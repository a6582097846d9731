import { describe, expect, it } from 'vitest'
import { compareHlc, formatHlc, readHlc } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { MIN_OFFSET_CHANGE_MS } from './clock-correction.js'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const T = Date.UTC(2026, 0, 1)
const MIN = 60_000

/** A store whose wall clock is `skew` off the real time `real` (what the relay says). */
async function device(skew: number) {
  const real = testClock(T)
  const memory = await openTestMemory({ now: () => real.now() + skew })
  await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
  return { real, memory, replication: replicationOf(memory) }
}

const physicalOf = (stamp: string | undefined) => readHlc(stamp)!.physical

describe("the clock learns the relay's time", () => {
  it('stamps with corrected time, keeps the offset across restarts, and warns while it is beyond the bound', async () => {
    const { real, memory, replication } = await device(10 * MIN)
    expect(replication.clockOffset()).toBeUndefined()
    expect((await memory.status.get()).warnings).toEqual([])
    expect(await replication.learnClock(real.now())).toEqual({ offsetMs: -10 * MIN, movedMs: -10 * MIN })
    expect(replication.clockOffset()).toBe(-10 * MIN)
    const [warning] = (await memory.status.get()).warnings
    expect(warning).toMatchObject({ type: 'clock', offsetMs: -10 * MIN })
    expect(warning!.message).toMatch(/10 minutes fast/)
    await memory.facts.set('p', 'k', 1)
    expect(physicalOf((await replication.pending())[0]!.record!.hlc)).toBe(T)
    // a reading within the noise changes nothing; one after a restart still applies
    expect(await replication.learnClock(real.now() + 20)).toEqual({ offsetMs: -10 * MIN, movedMs: 0 })
    await memory.close()
    const reopened = await openTestMemory({ now: () => real.now() + 10 * MIN, indexedDB: memory.indexedDB, userId: memory.userId })
    expect(replicationOf(reopened).clockOffset()).toBe(-10 * MIN)
    expect((await reopened.status.get()).warnings.map((w) => w.type)).toEqual(['clock'])
    real.advance(5)
    await reopened.facts.set('p', 'j', 1)
    expect(physicalOf((await replicationOf(reopened).pending()).find((p) => p.id === 'p/j')!.record!.hlc)).toBe(T + 5)
    // the clock set right: the warning goes
    await replicationOf(reopened).learnClock(real.now() + 10 * MIN)
    expect((await reopened.status.get()).warnings).toEqual([])
    await reopened.close()
  })

  it('edits made before a correction are stamped again at the drain, moved by it, in their order; the clock restarts at real time', async () => {
    const { real, memory, replication } = await device(10 * MIN) // offline, 10 minutes fast, never corrected
    await memory.facts.set('p', 'a', 1)
    real.advance(1)
    await memory.blocks.set('p', 'persona', 'x')
    real.advance(1)
    await memory.facts.set('p', 'a', 2)
    const before = await replication.pending()
    expect(before.map((p) => physicalOf(p.record!.hlc))).toEqual([T + 10 * MIN + 2, T + 10 * MIN + 1, T + 10 * MIN + 2])
    await replication.learnClock(real.now())
    // the clock left the stamps it issued with the wrong time behind
    await memory.facts.set('p', 'c', 3)
    const c = (await replication.pending()).find((p) => p.id === 'p/c')!
    expect(physicalOf(c.record!.hlc)).toBe(T + 2)
    const after = await replication.restamp(await replication.pending())
    const byId = new Map(after.map((p) => [p.id, p.record!.hlc]))
    expect(physicalOf(byId.get('p/a'))).toBe(T + 2)
    expect(physicalOf(byId.get('p/persona'))).toBe(T + 1)
    expect(compareHlc(byId.get('p/persona'), byId.get('p/a'))).toBeLessThan(0)
    expect(byId.get('p/c')).toBe(c.record!.hlc) // written after the correction: as it was
    // the rows hold the new stamps, one outbox entry per record, the later write last
    expect(after.map((p) => p.id)).toEqual(['p/c', 'p/persona', 'p/a'])
    expect((await replication.pending()).map((p) => p.id)).toEqual(['p/c', 'p/persona', 'p/a'])
    expect((await replication.snapshot('p')).records.find((r) => r.id === 'p/a')!.hlc).toBe(byId.get('p/a'))
    // done once: a second drain publishes them as they are
    expect(await replication.restamp(await replication.pending())).toEqual(after)
    await memory.close()
  })

  it('a stamp moved back stays after what the document holds for the record; messages keep their order', async () => {
    const { real, memory, replication } = await device(30 * MIN)
    await memory.projects.setSync('p', { messages: true })
    const s = await memory.sessions.create('p')
    await memory.messages.append(s.id, { role: 'user', content: 'one' })
    real.advance(1)
    await memory.messages.append(s.id, { role: 'assistant', content: 'two' })
    await memory.facts.set('p', 'k', 'mine')
    await replication.learnClock(real.now())
    const held = formatHlc(T + MIN, 0, 'other') // what another device wrote, and this one replaced (its clock was 30 minutes fast)
    const after = await replication.restamp(await replication.pending(), (kind, id) => (kind === 'facts' && id === 'p/k' ? held : undefined))
    const k = after.find((p) => p.id === 'p/k')!
    expect(compareHlc(k.record!.hlc, held)).toBeGreaterThan(0)
    expect(physicalOf(k.record!.hlc)).toBe(T + MIN)
    const messages = after.filter((p) => p.kind === 'messages').map((p) => [p.record!.row.content, physicalOf(p.record!.hlc)])
    expect(messages).toEqual([
      ['one', T],
      ['two', T + 1],
    ])
    expect((await memory.messages.tail(s.id, 10)).map((m) => m.content)).toEqual(['one', 'two'])
    await memory.close()
  })

  it('hysteresis: the offset moves only for a reading 1 s or more off it; jitter neither moves it nor stamps waiting edits again', async () => {
    expect(MIN_OFFSET_CHANGE_MS).toBe(1_000)
    const real = testClock(T)
    let skew = -300 // 300 ms slow: within the jitter of a reading
    const memory = await openTestMemory({ now: () => real.now() + skew })
    await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const replication = replicationOf(memory)
    // The first reading within 1 s of no offset is learned as no offset: the clock stamps as it is.
    expect(await replication.learnClock(real.now())).toEqual({ offsetMs: 0, movedMs: 0 })
    expect(replication.clockOffset()).toBe(0)
    await memory.facts.set('p', 'a', 1)
    expect(physicalOf((await replication.pending())[0]!.record!.hlc)).toBe(T - 300)
    // Readings that jitter around it (up to 999 ms either way of the offset) change nothing: no correction, no restamp.
    for (const jitter of [400, -650, 999, -999, 0]) expect(await replication.learnClock(real.now() - 300 + jitter)).toEqual({ offsetMs: 0, movedMs: 0 })
    const waiting = await replication.pending()
    expect(await replication.restamp(waiting)).toEqual(waiting)
    // The clock falls 2 s behind: learned at the next reading, and the waiting edit moves by it (never past now).
    real.advance(10)
    skew = -2_300
    expect(await replication.learnClock(real.now())).toEqual({ offsetMs: 2_300, movedMs: 2_300 })
    const [moved] = await replication.restamp(await replication.pending())
    expect(physicalOf(moved!.record!.hlc)).toBe(real.now())
    // Around the new offset the same hysteresis holds, both ways; 1 s off it moves it.
    expect(await replication.learnClock(real.now() + 999)).toEqual({ offsetMs: 2_300, movedMs: 0 })
    expect(await replication.learnClock(real.now() - 999)).toEqual({ offsetMs: 2_300, movedMs: 0 })
    expect(await replication.learnClock(real.now() - 1_000)).toEqual({ offsetMs: 1_300, movedMs: -1_000 })
    await memory.close()
  })

  it('a clock that jumps by seconds while it runs is learned; the warning shows only beyond the bound', async () => {
    const real = testClock(T)
    let skew = 0
    const memory = await openTestMemory({ now: () => real.now() + skew })
    await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const replication = replicationOf(memory)
    expect(await replication.learnClock(real.now())).toEqual({ offsetMs: 0, movedMs: 0 })
    skew = 3_000
    expect(await replication.learnClock(real.now())).toEqual({ offsetMs: -3_000, movedMs: -3_000 })
    await memory.facts.set('p', 'k', 1)
    expect(physicalOf((await replication.pending())[0]!.record!.hlc)).toBe(T)
    expect((await memory.status.get()).warnings).toEqual([])
    skew = 6 * MIN
    await replication.learnClock(real.now())
    expect((await memory.status.get()).warnings).toEqual([expect.objectContaining({ type: 'clock', offsetMs: -6 * MIN })])
    await memory.close()
  })

  it('a restamp queued behind a reading of the relay time counts its correction: the same stamps as one after the other', async () => {
    /** A device 70 minutes fast that learned 10 of them, wrote offline, and reads the relay again (the other 60). */
    async function scenario(together: boolean): Promise<number[]> {
      const real = testClock(T)
      let skew = 10 * MIN
      const memory = await openTestMemory({ now: () => real.now() + skew })
      await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
      const replication = replicationOf(memory)
      await memory.facts.set('p', 'a', 1)
      real.advance(1)
      await memory.facts.set('p', 'b', 1)
      await replication.learnClock(real.now())
      skew = 70 * MIN
      const pending = await replication.pending()
      let out: Awaited<ReturnType<typeof replication.restamp>>
      if (together) [, out] = await Promise.all([replication.learnClock(real.now()), replication.restamp(pending)])
      else {
        await replication.learnClock(real.now())
        out = await replication.restamp(pending)
      }
      const stamps = out.map((p) => physicalOf(p.record!.hlc))
      expect(await replication.restamp(await replication.pending())).toEqual(out) // done once
      await memory.close()
      return stamps
    }
    const apart = await scenario(false)
    expect(apart).toEqual([T - 60 * MIN, T + 1 - 60 * MIN])
    expect(await scenario(true)).toEqual(apart)
  })
})
