import { describe, expect, it } from 'vitest'
import { count } from './dom.js'

describe('count', () => {
  it('puts the noun in the number the count asks for', () => {
    expect(count(0, 'item')).toBe('0 items')
    expect(count(1, 'item')).toBe('1 item')
    expect(count(2, 'item')).toBe('2 items')
    expect(count(1, 'memory write')).toBe('1 memory write')
    expect(count(3, 'entry', 'entries')).toBe('3 entries')
  })
})
