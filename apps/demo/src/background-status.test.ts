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

  it('names the first records of a stamps_ahead warning and the devices that wrote them', () => {
    const record = (i: number) => ({ projectId: 'p', kind: 'facts', id: `p/k${i}`, name: `k${i}`, hlc: `4070908800000.0000${i}.dev2099`, deviceId: 'dev2099' })
    const warning = {
      type: 'stamps_ahead' as const,
      message: "5 synced records carry stamps far ahead of this device's clock.",
      count: 5,
      records: [0, 1, 2, 3, 4].map(record),
      since: 1,
    }
    expect(backgroundWarnings({ ...healthy, warnings: [warning] })).toBe(
      "5 synced records carry stamps far ahead of this device's clock. Records: facts k0 (device dev2099), facts k1 (device dev2099), facts k2 (device dev2099), and 2 more.",
    )
  })
})
