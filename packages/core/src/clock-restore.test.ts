import { describe, expect, it } from 'vitest'
import { compareHlc, formatHlc, type MirroredRecord, replicationOf } from '@engram/core'
import { openTestMemory, testClock } from '../../../test/support/memory.js'

const T = Date.UTC(2026, 0, 1)
const MIN = 60_000

function remoteFact(key: string, value: string, hlc: string): MirroredRecord {
  return { kind: 'facts', projectId: 'p1', id: `p1/${key}`, hlc, row: { key, value, confidence: 1, tags: [], createdAt: T, updatedAt: T } }
}

describe('the clock across restarts and against hostile stamps', () => {
  it('restores from the highest stored stamp: an edit after reopening beats a remote stamp from a fast clock', async () => {
    const clock = testClock(T)
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const fast = formatHlc(T + 10 * MIN, 0, 'devicea')
    const result = await replicationOf(first).applyRemote([remoteFact('k', 'from A', fast)], { maxClockLeadMs: 15 * MIN })
    expect(result.applied).toBe(1)
    first.close()

    const reopened = await openTestMemory({ now: clock.now, indexedDB: first.indexedDB, userId: first.userId })
    await reopened.facts.set('p1', 'k', 'from B after restart')
    const [entry] = (await replicationOf(reopened).pending()).filter((p) => p.id === 'p1/k')
    expect(compareHlc(entry!.record!.hlc, fast)).toBeGreaterThan(0)
    reopened.close()
  })

  it('quarantines malformed stamps and stamps beyond the drift bound: not stored, clock unmoved', async () => {
    const clock = testClock(T)
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const batch = [
      remoteFact('tilde', 'wins forever?', '~'),
      remoteFact('future', 'from 2099', formatHlc(Date.UTC(2099, 0, 1), 0, 'devf')),
      remoteFact('max', 'frozen?', '9999999999999.99999.x'),
      remoteFact('honest', 'ok', formatHlc(T + 1, 0, 'devh')),
    ]
    const result = await replicationOf(memory).applyRemote(batch)
    expect(result.applied).toBe(1)
    expect(result.quarantined.map((q) => [q.record.row.key, q.verdict])).toEqual([
      ['tilde', 'malformed'],
      ['future', 'ahead'],
      ['max', 'ahead'],
    ])
    expect(await memory.facts.get('p1', 'tilde')).toBeUndefined()
    expect(await memory.facts.get('p1', 'future')).toBeUndefined()
    await memory.facts.set('p1', 'after', 1)
    const after = (await replicationOf(memory).pending()).find((p) => p.id === 'p1/after')!
    expect(after.hlc.startsWith(String(T + 1))).toBe(true) // the clock followed only the honest stamp
    expect(replicationOf(memory).receiveClock('~')).toBe('malformed')
    memory.close()
  })
})
