import { describe, expect, it } from 'vitest'
import type { BackgroundExtractor, Memory } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'

const observer: BackgroundExtractor = {
  extract: async () => [],
  observe: async (input) => ({ observations: [{ text: `Observed ${input.messages.length} messages about trains.`, priority: 'medium' }] }),
  settings: { observeTokens: 10 },
}

async function longSession(memory: Memory): Promise<string> {
  await memory.projects.create({ name: 'P', id: 'p' })
  const session = await memory.sessions.create('p')
  for (let i = 0; i < 4; i++) {
    await memory.turns.begin('p', { sessionId: session.id, turnId: `t${i}`, prompt: `Turn ${i}: the night train to Vienna leaves at nine.`, budget: 500 })
    await memory.turns.end({ sessionId: session.id, turnId: `t${i}`, reply: 'Noted.' })
  }
  await memory.extraction.flush()
  return session.id
}

describe('observations', () => {
  it('are listed oldest first, go into dumps and come back on import', async () => {
    const memory = await openTestMemory({ extractor: observer })
    const sessionId = await longSession(memory)
    const listed = await memory.observations.list(sessionId)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed[0]).toMatchObject({ projectId: 'p', sessionId, priority: 'medium', generation: 0 })
    const dump = await memory.export('p')
    expect((dump.tables as Record<string, unknown[]>).observations).toHaveLength(listed.length)
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect((await other.observations.list(sessionId)).map((o) => o.text)).toEqual(listed.map((o) => o.text))
    await memory.close()
    await other.close()
  })

  it('list validates its input', async () => {
    const memory = await openTestMemory()
    await expect(memory.observations.list('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.observations.list('s', { every: true } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.observations.list('s')).toEqual([])
    await memory.close()
  })
})
