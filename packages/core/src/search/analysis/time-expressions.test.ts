import { describe, expect, it } from 'vitest'
import { queryTimeWindow } from './time-expressions.js'

const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d)
// Asked on Wednesday 2026-06-17 at 15:00 UTC.
const now = day(2026, 6, 17) + 15 * 3600 * 1000
const span = (q: string) => {
  const w = queryTimeWindow(q, now)
  return w && [new Date(w.from).toISOString().slice(0, 10), new Date(w.to).toISOString().slice(0, 10), w.text]
}

describe('time expressions in a query', () => {
  it('reads a month with or without a year, the latest one up to the day asked', () => {
    expect(span('Which restaurant did Nadia eat at in May 2025?')).toEqual(['2025-05-01', '2025-06-01', 'May 2025'])
    expect(span('What did we do in March?')).toEqual(['2026-03-01', '2026-04-01', 'in March'])
    // August has not come yet this year: last year's.
    expect(span('Where did she travel during August?')).toEqual(['2025-08-01', '2025-09-01', 'during August'])
  })

  it('reads a day in either order, with ordinals', () => {
    expect(span('What happened on 14 March 2026?')).toEqual(['2026-03-14', '2026-03-15', '14 March 2026'])
    expect(span('Who called on the 3rd of May?')).toEqual(['2026-05-03', '2026-05-04', '3rd of May'])
    expect(span('Plans for December 24, 2025')).toEqual(['2025-12-24', '2025-12-25', 'December 24, 2025'])
  })

  it('reads relative words against the day asked', () => {
    expect(span('What did I cook yesterday?')).toEqual(['2026-06-16', '2026-06-17', 'yesterday'])
    expect(span('What did Tomas buy last month?')).toEqual(['2026-05-01', '2026-06-01', 'last month'])
    expect(span('Where did we eat last week?')).toEqual(['2026-06-08', '2026-06-15', 'last week'])
    expect(span('Who did I meet last Saturday?')).toEqual(['2026-06-13', '2026-06-14', 'last Saturday'])
    expect(span('What did we do last weekend?')).toEqual(['2026-06-13', '2026-06-15', 'last weekend'])
    expect(span('What did I read two weeks ago?')).toEqual(['2026-05-31', '2026-06-07', 'two weeks ago'])
    expect(span('Which trips did we take in 2025?')).toEqual(['2025-01-01', '2026-01-01', 'in 2025'])
  })

  it('finds nothing in a query without a time, and "may" the verb is not a month', () => {
    expect(queryTimeWindow('What is the name of my cat?', now)).toBeUndefined()
    expect(queryTimeWindow('Which book may I borrow?', now)).toBeUndefined()
    // "since March" is not the month of March: no window rather than a wrong one.
    expect(queryTimeWindow('What changed since March?', now)).toBeUndefined()
    expect(queryTimeWindow('I may 3 times have said it', now)?.text).toBeUndefined()
  })
})
