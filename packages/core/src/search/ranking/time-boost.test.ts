import { describe, expect, it } from 'vitest'
import { englishAnalyzer } from '@engram/core'
import { openTestMemory, testClock } from '../../../../../test/support/memory.js'
import type { Candidate } from './bm25.js'
import { boostTimeWindow, TOLD_AFTER, withoutTimeTerms } from './time-boost.js'
import { queryTimeWindow } from '../analysis/time-expressions.js'

const DAY = 24 * 3600 * 1000
const may = { from: Date.UTC(2026, 4, 1), to: Date.UTC(2026, 5, 1), text: 'in May' }
const candidate = (docId: string, at: number, score: number): Candidate => ({ docId, kind: 'message', at, score })

describe('time windows in ranking', () => {
  it('lifts candidates written inside the window, and shortly after it, over stronger ones outside', () => {
    const ranked = boostTimeWindow(
      [
        candidate('april', Date.UTC(2026, 3, 20), 10),
        candidate('may', Date.UTC(2026, 4, 12), 6),
        candidate('june-2', Date.UTC(2026, 5, 2), 5.5),
        candidate('july', Date.UTC(2026, 6, 1) + TOLD_AFTER, 7),
      ],
      may,
    )
    expect(ranked.map((c) => c.docId)).toEqual(['may', 'june-2', 'april', 'july'])
  })

  it('takes the time words out of the terms, unless nothing else is left', () => {
    const terms = englishAnalyzer.terms('Which restaurant did Nadia try in May 2026?')
    const window = queryTimeWindow('Which restaurant did Nadia try in May 2026?', Date.UTC(2026, 6, 1))!
    expect(withoutTimeTerms(englishAnalyzer, terms, window)).toEqual(englishAnalyzer.terms('restaurant Nadia try'))
    const only = englishAnalyzer.terms('in May 2026')
    expect(withoutTimeTerms(englishAnalyzer, only, window)).toEqual(only)
  })

  it('search ranks the turn of the month the query names first', async () => {
    const clock = testClock(Date.UTC(2026, 0, 5))
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ name: 'P', id: 'p1' })
    const ids = new Map<string, string>()
    for (const [month, place] of [
      [1, 'Saffron House'],
      [3, 'the Blue Heron'],
      [5, 'Osteria Lupo'],
      [7, 'Casa Verde'],
    ] as const) {
      clock.set(Date.UTC(2026, month - 1, 10))
      const s = await memory.sessions.create('p1')
      const m = await memory.messages.append(s.id, { role: 'user', content: `We tried a new restaurant, ${place}, the food was great.` })
      await memory.messages.append(s.id, { role: 'user', content: 'May I ask what you thought about the restaurant downtown?' })
      ids.set(place, m.id)
    }
    clock.set(Date.UTC(2026, 8, 1))
    const [first] = await memory.search('p1', 'Which restaurant did we try in March?', { limit: 3 })
    expect(first?.id).toBe(ids.get('the Blue Heron'))
    const [last] = await memory.search('p1', 'Which restaurant did we try last month?', { limit: 3 })
    expect(last?.createdAt).toBeLessThan(Date.UTC(2026, 8, 1))
    expect(last?.createdAt).toBeGreaterThanOrEqual(Date.UTC(2026, 6, 1) - DAY)
    await memory.close()
  })
})
