import { describe, expect, it } from 'vitest'
import type { BackgroundExtractor, Memory } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/** An observer whose notes name a word no message holds ("quokka"), so a hit on it is an observation's. */
function observer(options: { expiresIn?: number; now?: () => number; reflect?: boolean } = {}): BackgroundExtractor {
  return {
    extract: async () => [],
    observe: async (input) => ({
      observations: [
        {
          text: `Observed ${input.messages.length} messages: the user counts quokka sightings on the night train.`,
          priority: 'high',
          ...(options.expiresIn === undefined ? {} : { expiresAt: options.now!() + options.expiresIn }),
        },
      ],
    }),
    ...(options.reflect
      ? { reflect: async (input) => ({ observations: [{ text: `Condensed ${input.observations.length} notes: marmalade.`, priority: 'medium' }] }) }
      : {}),
    settings: { observeTokens: 10, ...(options.reflect ? { reflectTokens: 12 } : {}) },
  }
}

async function session(memory: Memory): Promise<string> {
  await memory.projects.create({ name: 'P', id: 'p' })
  return (await memory.sessions.create('p')).id
}

async function turns(memory: Memory, sessionId: string, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await memory.turns.begin('p', { sessionId, turnId: `t${i}`, prompt: `Turn ${i}: the night train to Vienna leaves at nine.`, budget: 500 })
    await memory.turns.end({ sessionId, turnId: `t${i}`, reply: 'Noted.' })
  }
  await memory.extraction.flush()
}

const observationHits = async (memory: Memory, query: string) =>
  (await memory.search('p', query, { mode: 'text', limit: 50 })).filter((h) => h.kind === 'observation')

describe('observations in search', () => {
  it('an observation the observer wrote is a hit of kind observation, in its session, with its text', async () => {
    const memory = await openTestMemory({ extractor: observer() })
    const sessionId = await session(memory)
    await turns(memory, sessionId, 0, 4)
    const listed = await memory.observations.list(sessionId)
    expect(listed.length).toBeGreaterThan(0)
    const hits = await memory.search('p', 'quokka sightings', { mode: 'text' })
    expect(hits.length).toBe(listed.length)
    for (const h of hits) expect(h).toMatchObject({ kind: 'observation', projectId: 'p', sessionId })
    expect(hits.map((h) => h.id).sort()).toEqual(listed.map((o) => o.id).sort())
    expect(hits[0]!.text).toBe(listed.find((o) => o.id === hits[0]!.id)!.text)
    // The kinds filter takes the new kind; a session filter keeps them.
    expect((await memory.search('p', 'quokka', { mode: 'text', kinds: ['observation'] })).length).toBe(listed.length)
    expect(await memory.search('p', 'quokka', { mode: 'text', kinds: ['message'] })).toEqual([])
    expect((await memory.search('p', 'quokka', { mode: 'text', sessionId })).length).toBe(listed.length)
    // Hybrid (the default) finds them too.
    expect((await memory.search('p', 'quokka')).map((h) => h.kind)).toContain('observation')
    await memory.close()
  })

  it('purging a session purges its observations: out of the list (all included) and out of search; other sessions keep theirs', async () => {
    const memory = await openTestMemory({ extractor: observer() })
    const sessionId = await session(memory)
    const other = (await memory.sessions.create('p')).id
    await turns(memory, sessionId, 0, 4)
    await turns(memory, other, 10, 4)
    const kept = await memory.observations.list(other)
    expect((await memory.observations.list(sessionId)).length).toBeGreaterThan(0)
    expect(kept.length).toBeGreaterThan(0)

    await memory.sessions.purge(sessionId)
    expect(await memory.observations.list(sessionId)).toEqual([])
    expect(await memory.observations.list(sessionId, { all: true })).toEqual([])
    const hits = await observationHits(memory, 'quokka sightings')
    expect(hits.map((h) => h.id).sort()).toEqual(kept.map((o) => o.id).sort())
    // The other session's observations are untouched.
    expect(await memory.observations.list(other)).toEqual(kept)
    await memory.close()
  })

  it('an expired observation leaves search at once, before the sweep purges it', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now, extractor: observer({ expiresIn: 60_000, now: clock.now }) })
    const sessionId = await session(memory)
    await turns(memory, sessionId, 0, 2)
    const listed = await memory.observations.list(sessionId)
    expect(listed.length).toBeGreaterThan(0)
    expect((await observationHits(memory, 'quokka')).length).toBe(listed.length)
    clock.advance(60_000)
    expect(await observationHits(memory, 'quokka')).toEqual([])
    expect(await memory.extraction.sweep()).toBe(listed.length)
    expect(await observationHits(memory, 'quokka')).toEqual([])
    await memory.close()
  })

  it('observations a reflection condensed leave search; the reflection is found in their place', async () => {
    const memory = await openTestMemory({ extractor: observer({ reflect: true }) })
    const sessionId = await session(memory)
    // Searching between the batches fills the query cache with the observations a later reflection condenses.
    for (let i = 0; i < 8; i += 2) {
      await turns(memory, sessionId, i, 2)
      await observationHits(memory, 'quokka')
      await observationHits(memory, 'marmalade')
    }
    const all = await memory.observations.list(sessionId, { all: true })
    const active = new Set((await memory.observations.list(sessionId)).map((o) => o.id))
    const superseded = all.filter((o) => o.supersededAt !== undefined)
    expect(superseded.length).toBeGreaterThan(0)
    expect(all.some((o) => o.generation > 0)).toBe(true)
    for (const word of ['quokka', 'marmalade']) {
      const hits = (await observationHits(memory, word)).map((h) => h.id).sort()
      const expected = all.filter((o) => active.has(o.id) && o.text.includes(word)).map((o) => o.id)
      expect(hits).toEqual(expected.sort())
      for (const o of superseded) expect(hits).not.toContain(o.id)
    }
    await memory.close()
  })

  it('a dump imported into another store (merge or replace) is searchable there', async () => {
    const memory = await openTestMemory({ extractor: observer() })
    const sessionId = await session(memory)
    await turns(memory, sessionId, 0, 4)
    const ids = (await memory.observations.list(sessionId)).map((o) => o.id).sort()
    const dump = await memory.export('p')
    for (const mode of ['merge', 'replace'] as const) {
      const other = await openTestMemory()
      await other.import(dump, { mode })
      expect((await observationHits(other, 'quokka')).map((h) => h.id).sort()).toEqual(ids)
      await other.close()
    }
    await memory.close()
  })
})
