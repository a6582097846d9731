import { describe, expect, it } from 'vitest'
import type { MemoryStatus } from '@engram/core'
import { backgroundProblems, backgroundWarnings } from './background-status.js'

const healthy: MemoryStatus = {
  embedder: { state: 'off' },
  summarizer: { state: 'off' },
  extractor: { state: 'ok' },
  sync: { state: 'ok', projects: { p: 'synced' } },
  problems: [],
  warnings: [],
}

describe('backgroundProblems', () => {
  it('is undefined while nothing fails, also after a recovery', () => {
    expect(backgroundProblems(healthy)).toBeUndefined()
    const lastError = { source: 'extractor' as const, code: 'internal', message: 'old', at: 1 }
    expect(backgroundProblems({ ...healthy, extractor: { state: 'ok', lastError }, problems: [lastError] })).toBeUndefined()
  })

  it('names every failing part with its last error', () => {
    const extractor = { source: 'extractor' as const, code: 'internal', message: 'the model returned garbage', at: 1 }
    const status: MemoryStatus = {
      ...healthy,
      extractor: { state: 'failing', lastError: extractor },
      sync: { state: 'failing', projects: { p: 'error' } },
      problems: [extractor],
    }
    expect(backgroundProblems(status)).toBe('extractor failing: the model returned garbage · sync failing')
  })
})

describe('backgroundWarnings', () => {
  it('shows the clock warning while there is one, and nothing otherwise', () => {
    expect(backgroundWarnings(healthy)).toBeUndefined()
    const message = "This device's clock is 10 minutes fast against the relay's"
    expect(backgroundWarnings({ ...healthy, warnings: [{ type: 'clock', message, offsetMs: -600_000, since: 1 }] })).toBe(message)
  })
})
