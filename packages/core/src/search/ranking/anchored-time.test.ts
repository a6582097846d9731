import { describe, expect, it } from 'vitest'
import { openTestMemory, testClock } from '../../../../../test/support/memory.js'
import { anchoredTime, anchoredWindow } from '../analysis/time-expressions.js'

const DAY = 24 * 3600 * 1000

describe('times relative to an event', () => {
  it('reads "N units before/after <event>" and its window once the event is dated', () => {
    const a = anchoredTime('What did Nadia buy two weeks before the Big Thief concert?')!
    expect(a).toEqual({ anchor: 'the Big Thief concert', offsetDays: -14, slackDays: 3, text: 'two weeks before the Big Thief concert' })
    const w = anchoredWindow(a, Date.UTC(2026, 4, 20, 18))
    expect([w.from, w.to]).toEqual([Date.UTC(2026, 4, 3), Date.UTC(2026, 4, 10)])
    expect(anchoredTime('Where did we eat a day after my surgery')?.offsetDays).toBe(1)
    expect(anchoredTime('What happened before the concert?')).toBeUndefined()
  })

  it('search finds the event first and lifts what was written around the day the query names', async () => {
    const clock = testClock(Date.UTC(2026, 3, 1))
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ name: 'P', id: 'p1' })
    const told = new Map<string, string>()
    for (const [day, text] of [
      [1, 'I bought a kayak on sale, no idea where it will fit.'],
      [15, 'I bought a record player, best money I spent this year.'],
      [29, 'We saw Big Thief play live, the sound was perfect.'],
      [40, 'I bought a telescope to look at the moon.'],
    ] as const) {
      clock.set(Date.UTC(2026, 3, 1) + day * DAY)
      const s = await memory.sessions.create('p1')
      told.set(text, (await memory.messages.append(s.id, { role: 'user', content: text })).id)
      for (const filler of ['The weather was grey all day.', 'Work has been busy, lots of meetings.', 'My sister called about the holidays.'])
        await memory.messages.append(s.id, { role: 'assistant', content: filler })
    }
    clock.set(Date.UTC(2026, 6, 1))
    const [first] = await memory.search('p1', 'What did I buy two weeks before the Big Thief concert?', { limit: 3, mode: 'text' })
    expect(first?.id).toBe(told.get('I bought a record player, best money I spent this year.'))
    // Without the event in memory, nothing is lifted: the plain ranking stands.
    const plain = await memory.search('p1', 'What did I buy two weeks before the opera?', { limit: 3, mode: 'text' })
    expect(plain.map((h) => h.text)).not.toContain('We saw Big Thief play live, the sound was perfect.')
    await memory.close()
  })
})
