import { describe, expect, it, vi } from 'vitest'
import type { Extractor, Memory } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup(extractor?: Extractor) {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now, ...(extractor ? { extractor } : {}) })
  await memory.projects.create({ name: 'P', id: 'p' })
  return { clock, memory }
}

const kinds = async (memory: Memory, sessionId: string) => (await memory.journal.load(sessionId)).records.map((r) => r.kind)

describe('turns', () => {
  it('begins once per (session, turn): a repeat returns the stored context without retrieving', async () => {
    const { memory } = await setup()
    await memory.facts.set('p', 'city', 'Rome')
    const build = vi.spyOn(memory.context, 'build')
    const turn = { sessionId: 'agent-1', turnId: 't1', prompt: 'Where do I live?', budget: 500 }
    const first = await memory.turns.begin('p', turn)
    expect(first.context.text).toContain('Rome')
    await memory.facts.set('p', 'city', 'Paris')
    const again = await memory.turns.begin('p', turn)
    expect(again).toEqual(first)
    expect(build).toHaveBeenCalledTimes(1)
    expect(build.mock.calls[0]![0]).toBe('p')
    expect(build.mock.calls[0]![1]).toMatchObject({ query: 'Where do I live?', budget: 500 })
    expect(await kinds(memory, 'agent-1')).toEqual(['turn.begin'])
    const [record] = (await memory.journal.load('agent-1')).records
    expect(record!.payload).toMatchObject({ turnId: 't1', projectId: 'p', prompt: 'Where do I live?' })
    await expect(memory.turns.begin('p', { ...turn, prompt: 'other' })).rejects.toMatchObject({ code: 'conflict' })
  })

  it('a begin after an import that removed the turn begins it again (no stale in-memory turn)', async () => {
    const { memory } = await setup()
    const turn = { sessionId: 'agent-1', turnId: 't1', prompt: 'hi', budget: 100 }
    await memory.turns.begin('p', turn)
    const dump = await memory.export('p')
    await memory.import({ ...dump, tables: { ...dump.tables, turns: [], journal: [] } }, { mode: 'replace' })
    await memory.turns.begin('p', turn)
    expect(await memory.turns.end({ sessionId: 'agent-1', turnId: 't1', reply: 'bye' })).toEqual({ written: 0 })
  })

  it('shares one retrieval between concurrent begins of the same turn', async () => {
    const { memory } = await setup()
    const build = vi.spyOn(memory.context, 'build')
    const turn = { sessionId: 's', turnId: 't', prompt: 'hi', budget: 100 }
    const results = await Promise.all(Array.from({ length: 5 }, () => memory.turns.begin('p', turn)))
    expect(build).toHaveBeenCalledTimes(1)
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1)
    expect(await kinds(memory, 's')).toEqual(['turn.begin'])
    const racing = await Promise.allSettled([
      memory.turns.begin('p', { ...turn, turnId: 'u' }),
      memory.turns.begin('p', { ...turn, turnId: 'u', prompt: 'something else' }),
    ])
    expect(racing.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect((racing[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' })
  })

  it('records prompt and reply as messages when the session is a conversation', async () => {
    const { memory } = await setup()
    const session = await memory.sessions.create('p', { id: 'chat' })
    await memory.turns.begin('p', { sessionId: session.id, turnId: 't1', prompt: 'Hello', budget: 200 })
    expect(await memory.turns.end({ sessionId: session.id, turnId: 't1', reply: 'Hi there' })).toEqual({ written: 0 })
    const messages = await memory.messages.tail(session.id, 10)
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hello'],
      ['assistant', 'Hi there'],
    ])
    expect(await kinds(memory, session.id)).toEqual(['turn.begin', 'turn.end'])
    // a turn whose project differs from the conversation's is rejected before anything is written
    await memory.projects.create({ name: 'Q', id: 'q' })
    await expect(memory.turns.begin('q', { sessionId: session.id, turnId: 't2', prompt: 'x', budget: 10 })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await kinds(memory, session.id)).toEqual(['turn.begin', 'turn.end'])
  })

  it('runs the extractor outside transactions and applies its operations together', async () => {
    const seen: unknown[] = []
    const extractor: Extractor = async (exchange, view) => {
      await new Promise((r) => setTimeout(r, 10)) // a slow "LLM call" must not break a transaction
      seen.push(exchange, await view.getFact('p', 'old'))
      return [
        { op: 'fact.set', key: 'pet', value: 'cat', confidence: 0.9, tags: ['home'] },
        { op: 'fact.delete', key: 'old' },
        { op: 'block.append', label: 'persona', text: 'Has a cat' },
        { op: 'passage.insert', projectId: 'user', text: 'The user adopted a cat named Miso.' },
      ]
    }
    const { memory } = await setup(extractor)
    await memory.facts.set('p', 'old', 'x')
    await memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'I got a cat', budget: 100 })
    expect(await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'Congrats!' })).toEqual({ written: 4 })
    expect(seen[0]).toEqual({ projectId: 'p', sessionId: 's', turnId: 't', prompt: 'I got a cat', reply: 'Congrats!' })
    expect(seen[1]).toMatchObject({ value: 'x' })
    expect(await memory.facts.get('p', 'pet')).toMatchObject({ value: 'cat', confidence: 0.9, tags: ['home'], source: { sessionId: 's', note: 'turn:t' } })
    expect(await memory.facts.get('p', 'old')).toBeUndefined()
    expect((await memory.blocks.get('p', 'persona'))?.value).toContain('Has a cat')
    expect((await memory.search('user', 'Miso', { mode: 'text' })).map((h) => h.kind)).toEqual(['passage'])
    expect(await kinds(memory, 's')).toEqual(['turn.begin', 'turn.end', 'turn.extracted'])
    // ending again returns the result without extracting twice
    expect(await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'Congrats!' })).toEqual({ written: 4 })
    expect(seen).toHaveLength(2)
  })

  it('reports a failing extractor and keeps what was recorded', async () => {
    const { memory } = await setup(() => {
      throw new Error('model offline')
    })
    await memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 })
    const result = await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'a' })
    expect(result).toEqual({ written: 0, extractionError: { code: 'internal', message: expect.stringContaining('model offline') } })
    expect(await kinds(memory, 's')).toEqual(['turn.begin', 'turn.end', 'turn.extraction_failed'])
    expect(await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'a' })).toEqual(result)
  })

  it('applies nothing when one operation is rejected', async () => {
    const { memory } = await setup(() => [
      { op: 'fact.set', key: 'a', value: 1 },
      { op: 'block.append', projectId: 'missing-project', label: 'x', text: 'y' },
    ])
    await memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 })
    const result = await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'a' })
    expect(result).toMatchObject({ written: 0, extractionError: { code: 'not_found' } })
    expect(await memory.facts.get('p', 'a')).toBeUndefined()
    const bad = await setup((() => [{ op: 'fact.explode' }]) as unknown as Extractor)
    await bad.memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 })
    expect(await bad.memory.turns.end({ sessionId: 's', turnId: 't', reply: 'a' })).toMatchObject({ extractionError: { code: 'invalid_input' } })
  })

  it('reconciles a turn that never ended as interrupted when the next one begins', async () => {
    const { memory } = await setup()
    await memory.turns.begin('p', { sessionId: 's', turnId: 't1', prompt: 'one', budget: 100 })
    await memory.turns.partial({ sessionId: 's', turnId: 't1', text: 'Half an ans' })
    await memory.turns.begin('p', { sessionId: 's', turnId: 't2', prompt: 'two', budget: 100 })
    const records = (await memory.journal.load('s')).records
    expect(records.map((r) => r.kind)).toEqual(['turn.begin', 'turn.interrupted', 'turn.begin'])
    expect(records[1]!.payload).toMatchObject({ turnId: 't1', partialReply: 'Half an ans' })
    await expect(memory.turns.end({ sessionId: 's', turnId: 't1', reply: 'late' })).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.turns.partial({ sessionId: 's', turnId: 't1', text: 'x' })).rejects.toMatchObject({ code: 'conflict' })
    // other sessions are untouched
    await memory.turns.begin('p', { sessionId: 'other', turnId: 't1', prompt: 'one', budget: 100 })
    expect(await kinds(memory, 's')).toHaveLength(3)
  })

  it('a begin that fails leaves the open turn of the session alone', async () => {
    const { memory } = await setup()
    await memory.sessions.create('p', { id: 'conv' })
    await memory.turns.begin('p', { sessionId: 'conv', turnId: 't1', prompt: 'one', budget: 100 })
    await memory.sessions.close('conv')
    const before = await memory.export()
    await expect(memory.turns.begin('p', { sessionId: 'conv', turnId: 't2', prompt: 'two', budget: 100 })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/reopen/),
    })
    const build = vi.spyOn(memory.context, 'build').mockRejectedValueOnce(new Error('embedder down'))
    await memory.sessions.reopen('conv')
    const reopened = await memory.export()
    await expect(memory.turns.begin('p', { sessionId: 'conv', turnId: 't3', prompt: 'three', budget: 100 })).rejects.toThrow()
    expect(build).toHaveBeenCalledTimes(1)
    expect({ ...(await memory.export()), exportedAt: 0 }).toEqual({ ...reopened, exportedAt: 0 })
    expect(reopened.tables.turns).toEqual(before.tables.turns)
    expect(await memory.turns.end({ sessionId: 'conv', turnId: 't1', reply: 'done' })).toEqual({ written: 0 })
  })

  it('ends a turn as interrupted without extracting', async () => {
    const extractor = vi.fn<Extractor>(() => [])
    const { memory } = await setup(extractor)
    await memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 })
    expect(await memory.turns.end({ sessionId: 's', turnId: 't', reply: 'partial', interrupted: true })).toEqual({ written: 0 })
    expect(extractor).not.toHaveBeenCalled()
    const last = (await memory.journal.load('s')).records.at(-1)
    expect(last).toMatchObject({ kind: 'turn.interrupted', payload: { turnId: 't', partialReply: 'partial' } })
  })

  it('reconciles after a reopen and still returns the stored context', async () => {
    const { clock, memory } = await setup()
    const first = await memory.turns.begin('p', { sessionId: 's', turnId: 't1', prompt: 'one', budget: 100 })
    await memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId, now: clock.now })
    const build = vi.spyOn(reopened.context, 'build')
    expect(await reopened.turns.begin('p', { sessionId: 's', turnId: 't1', prompt: 'one', budget: 100 })).toEqual(first)
    expect(build).not.toHaveBeenCalled()
    await reopened.turns.begin('p', { sessionId: 's', turnId: 't2', prompt: 'two', budget: 100 })
    expect(await kinds(reopened, 's')).toEqual(['turn.begin', 'turn.interrupted', 'turn.begin'])
  })

  it('validates input before writing', async () => {
    const { memory } = await setup()
    const ok = { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 }
    await expect(memory.turns.begin('', ok)).rejects.toMatchObject({ code: 'invalid_input' })
    for (const bad of [{ ...ok, prompt: '' }, { ...ok, budget: 0 }, { ...ok, budget: 1.5 }, { ...ok, turnId: ' t' }, { ...ok, projectId: 'p' } as never]) {
      await expect(memory.turns.begin('p', bad)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    await expect(memory.turns.begin('nope', ok)).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.turns.end({ sessionId: 's', turnId: 'never', reply: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.turns.end({ sessionId: 's', turnId: 't', reply: 1 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.turns.end({ sessionId: 's', turnId: 't', reply: 'x', interrupted: 'yes' } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.turns.partial({ sessionId: 's', turnId: 'never', text: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    expect(await memory.journal.sessions({ limit: 10 })).toEqual({ items: [] })
  })
})
