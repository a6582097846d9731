import { describe, expect, it } from 'vitest'
import type { BackgroundExtractor } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'

/** Counts the observer's and reflector's calls; a reflection answers `reflectWords` words. */
function counting(reflectWords: number) {
  const calls = { observe: 0, reflect: 0 }
  const extractor: BackgroundExtractor = {
    extract: async () => [],
    observe: async (input) => {
      calls.observe++
      return { observations: [{ text: `Observed ${input.messages.length} messages about the night train to Vienna.`, priority: 'high' }] }
    },
    reflect: async () => {
      calls.reflect++
      return { observations: [{ text: Array.from({ length: reflectWords }, (_, i) => `word${i}`).join(' '), priority: 'medium' }] }
    },
    settings: { observeTokens: 10, reflectTokens: 12 },
  }
  return { calls, extractor }
}

describe('observation and reflection jobs', () => {
  it('the observation that takes the notes past reflectTokens is condensed before flush resolves, with no further turn', async () => {
    const { calls, extractor } = counting(3)
    const memory = await openTestMemory({ extractor })
    await memory.projects.create({ name: 'P', id: 'p' })
    const { id: sessionId } = await memory.sessions.create('p')
    await memory.turns.begin('p', { sessionId, turnId: 't0', prompt: 'The night train to Vienna leaves at nine from platform four.', budget: 500 })
    await memory.turns.end({ sessionId, turnId: 't0', reply: 'Noted, nine from platform four.' })
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 0 })
    expect(calls).toEqual({ observe: 1, reflect: 1 })
    const all = await memory.observations.list(sessionId, { all: true })
    expect(all.map((o) => [o.generation, o.supersededAt === undefined])).toEqual([
      [0, false],
      [1, true],
    ])
    await memory.close()
  })

  it('a reflection whose answer is still over reflectTokens is not reflected again until the next observation', async () => {
    const { calls, extractor } = counting(40)
    const memory = await openTestMemory({ extractor })
    await memory.projects.create({ name: 'P', id: 'p' })
    const { id: sessionId } = await memory.sessions.create('p')
    for (let i = 0; i < 3; i++) {
      await memory.turns.begin('p', { sessionId, turnId: `t${i}`, prompt: `Turn ${i}: the night train to Vienna leaves at nine.`, budget: 500 })
      await memory.turns.end({ sessionId, turnId: `t${i}`, reply: 'Noted.' })
      await memory.extraction.flush()
      // Each turn passes observeTokens once: one observation, then one reflection of the notes.
      expect(calls).toEqual({ observe: i + 1, reflect: i + 1 })
    }
    await memory.close()
  })
})
