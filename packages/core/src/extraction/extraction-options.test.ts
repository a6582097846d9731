import { describe, expect, it } from 'vitest'
import { runtimeModule } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'

describe('background extractor options', () => {
  it('refuses a malformed extractor or settings with invalid_input before opening', async () => {
    expect(() => runtimeModule({ extractor: { extract: 'no' } as never })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => runtimeModule({ extractor: { extract: async () => [], observe: 1 } as never })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => runtimeModule({ extractor: { extract: async () => [], settings: { batchToken: 5 } } as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('batchToken') }),
    )
    expect(() => runtimeModule({ extractor: { extract: async () => [], settings: { maxAttempts: 0 } } })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    )
    await expect(openTestMemory({ extractor: { extract: async () => [], settings: { dailyTokenBudget: -1 } } })).rejects.toMatchObject({
      code: 'invalid_input',
    })
  })

  it('an answer that is not operations fails the job (status), and a rejected operation is skipped, the others applied', async () => {
    let answer: unknown = 'nonsense'
    const memory = await openTestMemory({ extractor: { extract: async () => answer as never, settings: { maxAttempts: 1 } } })
    await memory.projects.create({ name: 'P', id: 'p' })
    const end = async (turnId: string) => {
      await memory.turns.begin('p', { sessionId: 's', turnId, prompt: 'hello', budget: 100 })
      return memory.turns.end({ sessionId: 's', turnId, reply: 'hi' })
    }
    await end('t1')
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 1 })
    expect((await memory.status.get()).extractor).toMatchObject({ state: 'failing', lastError: { code: 'invalid_input' } })
    answer = [
      { op: 'fact.set', key: 'ok', value: 1, reason: 'fine' },
      { op: 'block.replace', label: 'human', oldText: 'not there', newText: 'x', reason: 'bad' },
      { op: 'fact.set', key: '', value: 2, reason: 'empty key' },
      { op: 'fact.set', key: 'also ok', value: 3 },
    ]
    await end('t2')
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 1 })
    expect((await memory.facts.list('p')).items.map((f) => f.key)).toEqual(['also ok', 'ok'])
    const extracted = (await memory.journal.load('s')).records.find((r) => r.kind === 'turn.extracted')
    expect(extracted?.payload).toMatchObject({
      turnId: 't2',
      operations: 2,
      reasons: ['fine', 'bad', 'empty key', null],
      rejected: [{ index: 1 }, { index: 2 }],
    })
    expect((await memory.status.get()).extractor.state).toBe('ok')
    // The failed job runs again on retry (now with the good answer).
    expect(await memory.extraction.retry()).toBe(1)
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 0 })
    await memory.close()
  })
})
