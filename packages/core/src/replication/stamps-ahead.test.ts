import { describe, expect, it } from 'vitest'
import { formatHlc } from '../store/hlc.js'
import { MAX_LISTED_STAMPS_AHEAD } from '../store/status.js'
import type { SyncRecordProblem } from './sync-api.js'
import { stampsAheadWarningOf } from './stamps-ahead.js'

const FUTURE = Date.UTC(2099, 0, 1)

function ahead(id: string, physical: number, deviceId = 'dev2099', extra: Partial<SyncRecordProblem> = {}): SyncRecordProblem {
  const hlc = formatHlc(physical, 0, deviceId)
  return { type: 'clock_ahead', kind: 'facts', id, key: `facts:${id}`, hlc, message: '', ...extra }
}

describe('the stamps_ahead warning', () => {
  it('lists the clock_ahead records of every project, furthest ahead first, with the device each stamp names', () => {
    const warning = stampsAheadWarningOf(
      new Map([
        ['p', [ahead('p/k', FUTURE, 'dev2099', { name: 'k', deviceId: 'dev2099' }), { ...ahead('p/x', FUTURE + 5), type: 'malformed_stamp' as const }]],
        ['q', [ahead('q/j', FUTURE + 1, 'other')]],
      ]),
    )
    expect(warning?.count).toBe(2)
    expect(warning?.records).toEqual([
      { projectId: 'q', kind: 'facts', id: 'q/j', hlc: formatHlc(FUTURE + 1, 0, 'other'), deviceId: 'other' },
      { projectId: 'p', kind: 'facts', id: 'p/k', name: 'k', hlc: formatHlc(FUTURE, 0, 'dev2099'), deviceId: 'dev2099' },
    ])
    expect(warning?.message).toBe(
      `2 synced records carry stamps far ahead of this device's clock (furthest: facts "q/j" of project "q", stamped 2099-01-01T00:00:00.001Z), written by devices other, dev2099 whose clock is wrong. Every device applies them alike and the next edit of each wins; set that device's clock right.`,
    )
  })

  it('is absent without such records, and lists at most MAX_LISTED_STAMPS_AHEAD of many', () => {
    expect(stampsAheadWarningOf(new Map())).toBeUndefined()
    expect(stampsAheadWarningOf(new Map([['p', [{ ...ahead('p/k', FUTURE), type: 'other_key' as const }]]]))).toBeUndefined()
    const many = Array.from({ length: 250 }, (_, i) => ahead(`p/${i}`, FUTURE + i))
    const warning = stampsAheadWarningOf(new Map([['p', many]]))
    expect(warning?.count).toBe(250)
    expect(warning?.records).toHaveLength(MAX_LISTED_STAMPS_AHEAD)
    expect(warning?.records[0]?.id).toBe('p/249')
    expect(stampsAheadWarningOf(new Map([['p', [ahead('p/k', FUTURE, 'dev2099', { name: 'k' })]]]))?.message).toMatch(
      /^A synced record carries a stamp far ahead of this device's clock \(facts "k" of project "p", stamped 2099-01-01T00:00:00\.000Z\), written by device dev2099/,
    )
  })
})
