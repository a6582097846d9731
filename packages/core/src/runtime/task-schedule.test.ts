import { describe, expect, it } from 'vitest'
import { dayOfMonth, nextOccurrence, nextOccurrenceAfter, retryDelay, RETRY_MAX_MS } from './task-schedule.js'
import { normaliseText } from './normalise-text.js'
import { similarity } from './task-similarity.js'

const at = (y: number, m: number, d: number, h = 9) => Date.UTC(y, m - 1, d, h)

describe('task schedule', () => {
  it('steps daily and weekly', () => {
    expect(nextOccurrence(at(2026, 1, 1), 'daily', 1)).toBe(at(2026, 1, 2))
    expect(nextOccurrence(at(2026, 12, 31), 'weekly', 31)).toBe(at(2027, 1, 7))
  })

  it('keeps the day of month and clamps month ends', () => {
    let t = at(2026, 1, 31)
    const seen: string[] = []
    for (let i = 0; i < 4; i++) {
      t = nextOccurrence(t, 'monthly', 31)
      seen.push(new Date(t).toISOString().slice(0, 13))
    }
    expect(seen).toEqual(['2026-02-28T09', '2026-03-31T09', '2026-04-30T09', '2026-05-31T09'])
    expect(nextOccurrence(at(2028, 1, 30), 'monthly', 30)).toBe(at(2028, 2, 29))
    expect(nextOccurrence(at(2026, 12, 15), 'monthly', 15)).toBe(at(2027, 1, 15))
    expect(dayOfMonth(at(2026, 3, 31))).toBe(31)
  })

  it('skips missed occurrences', () => {
    expect(nextOccurrenceAfter(at(2026, 1, 1), 'daily', 1, at(2026, 1, 5, 12))).toBe(at(2026, 1, 6))
    expect(nextOccurrenceAfter(at(2026, 1, 1), 'daily', 1, at(2026, 1, 1))).toBe(at(2026, 1, 2))
  })

  it('backs off exponentially with a cap', () => {
    expect([1, 2, 3].map((n) => retryDelay(n))).toEqual([60_000, 120_000, 240_000])
    expect(retryDelay(30)).toBe(RETRY_MAX_MS)
    expect(retryDelay(2, 1000)).toBe(2000)
  })
})

describe('task similarity', () => {
  it('normalises case, punctuation and spacing', () => {
    expect(normaliseText('  Call   MOM!!  ')).toBe('call mom')
    expect(normaliseText('Ｃａｌｌ-mom')).toBe('call mom')
  })
  it('scores typos and reordering high, different tasks low', () => {
    expect(similarity('call mom tomorrow', 'call mom tomorow')).toBeGreaterThanOrEqual(0.8)
    expect(similarity('pay the rent', 'the rent pay')).toBe(1)
    expect(similarity('buy milk', 'buy bread')).toBeLessThan(0.8)
    expect(similarity('', 'x')).toBe(0)
  })
})
