import { describe, expect, it } from 'vitest'
import { createAwarenessLedger } from './awareness-budget.js'

describe('awareness budget', () => {
  it('refuses a connection past its bytes and a room past its bytes', () => {
    const ledger = createAwarenessLedger(100, 150)
    expect(ledger.admit(new Set(), [{ client: 1, bytes: 90 }])).toBe(true)
    expect(ledger.admit(new Set([1]), [{ client: 2, bytes: 20 }])).toBe(false)
    expect(ledger.admit(new Set([1]), [{ client: 1, bytes: 99 }])).toBe(true)
    expect(ledger.admit(new Set(), [{ client: 3, bytes: 60 }])).toBe(false)
    expect(ledger.admit(new Set(), [{ client: 3, bytes: 51 }])).toBe(true)
    expect(ledger.bytes).toBe(150)
    ledger.forget([1])
    expect(ledger.bytes).toBe(51)
  })
})
