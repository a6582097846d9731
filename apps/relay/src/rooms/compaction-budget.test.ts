import { describe, expect, it } from 'vitest'
import { createCompactionBudget } from './compaction-budget.js'

describe('compaction budget', () => {
  it('waits for an eighth of the snapshot to be written again', () => {
    const budget = createCompactionBudget(8000)
    expect(budget.allows(999, 0)).toBe(false)
    expect(budget.allows(1000, 0)).toBe(true)
  })

  it('keeps a room under a tenth of the time compacting', () => {
    const budget = createCompactionBudget(0)
    budget.record(50, 8000, 1000)
    expect(budget.allows(1e9, 1449)).toBe(false)
    expect(budget.allows(1e9, 1450)).toBe(true)
  })

  it('refuses a document that just compacted and wrote a few bytes since', () => {
    const budget = createCompactionBudget(0)
    budget.record(0, 1_000_000, 0)
    for (let i = 1; i <= 800; i++) expect(budget.allows(i * 20, i)).toBe(false)
  })
})
