import { describe, expect, it } from 'vitest'
import { secondPerson } from './second-person.js'

describe('secondPerson', () => {
  it('says the user’s words back to them', () => {
    expect(secondPerson('my favourite colour')).toBe('your favourite colour')
    expect(secondPerson('My sister and I')).toBe('Your sister and you')
    expect(secondPerson('the name of our dog')).toBe('the name of your dog')
    expect(secondPerson('I am tired')).toBe('you are tired')
    // Words that only contain "my" or "I" stay as they are.
    expect(secondPerson('myriad Italian items')).toBe('myriad Italian items')
  })
})
