import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { archiveModule, contextModule, conversationsModule, createMemory, type Extractor, factsModule, type MemoryOperation, runtimeModule } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/*
 * facts.set issues its fact, version and index writes together. Called inside an outer write
 * transaction (here: the operations of an extracted turn), every part must keep Dexie's
 * transaction zone: a part that loses it lets the outer transaction commit before it is done,
 * so a later failing operation can no longer roll back the facts written before it.
 */

async function setup(operations: MemoryOperation[]) {
  const clock = testClock()
  const extractor: Extractor = () => operations
  const memory = await openTestMemory({ now: clock.now, extractor })
  await memory.projects.create({ name: 'P', id: 'p' })
  return memory
}

const endTurn = async (memory: Awaited<ReturnType<typeof setup>>) => {
  await memory.turns.begin('p', { sessionId: 's', turnId: 't', prompt: 'q', budget: 100 })
  return memory.turns.end({ sessionId: 's', turnId: 't', reply: 'a' })
}

describe('facts written inside an outer transaction', () => {
  const writes: Array<[string, MemoryOperation[]]> = [
    ['the first fact indexed in its project', [{ op: 'fact.set', key: 'new', value: 'first' }]],
    [
      'new facts, a replaced one and a deleted one',
      [
        { op: 'fact.set', key: 'new', value: 'one' },
        { op: 'fact.set', key: 'kept', value: 'replaced' },
        { op: 'fact.set', key: 'new', value: 'two' },
        { op: 'fact.delete', key: 'gone' },
        { op: 'fact.set', key: 'other', value: 'three', tags: ['t'] },
      ],
    ],
    ['a fact in a second project indexed for the first time', [{ op: 'fact.set', projectId: 'user', key: 'name', value: 'Ada' }]],
  ]

  it.each(writes)('%s: a later failing operation rolls all of them back', async (_name, operations) => {
    const memory = await setup([...operations, { op: 'block.append', projectId: 'missing', label: 'x', text: 'y' }])
    await memory.facts.set('p', 'kept', 'lavender')
    await memory.facts.set('p', 'gone', 'saffron')
    const result = await endTurn(memory)
    expect(result).toMatchObject({ written: 0, extractionError: { code: 'not_found' } })
    expect(await memory.facts.get('p', 'new')).toBeUndefined()
    expect(await memory.facts.get('user', 'name')).toBeUndefined()
    expect(await memory.facts.get('p', 'kept')).toMatchObject({ value: 'lavender', version: 1 })
    expect(await memory.facts.get('p', 'gone')).toMatchObject({ value: 'saffron', version: 1 })
    expect((await memory.facts.history('p', 'kept')).map((v) => v.value)).toEqual(['lavender'])
    expect((await memory.search('p', 'replaced', { mode: 'text' })).length).toBe(0)
    for (const word of ['lavender', 'saffron']) expect((await memory.search('p', word, { mode: 'text' })).map((h) => h.kind)).toEqual(['fact'])
    memory.close()
  })

  it.each(writes)('%s: applied together with the turn record', async (_name, operations) => {
    const memory = await setup(operations)
    await memory.facts.set('p', 'kept', 'lavender')
    await memory.facts.set('p', 'gone', 'saffron')
    expect(await endTurn(memory)).toEqual({ written: operations.length })
    const sets = operations.filter((op): op is Extract<MemoryOperation, { op: 'fact.set' }> => op.op === 'fact.set')
    const last = new Map(sets.map((op) => [`${op.projectId ?? 'p'}\u0001${op.key}`, op.value]))
    for (const [id, value] of last) {
      const [projectId, key] = id.split('\u0001') as [string, string]
      expect(await memory.facts.get(projectId, key)).toMatchObject({ value })
      expect((await memory.search(projectId, String(value), { mode: 'text' })).map((h) => h.kind)).toEqual(['fact'])
    }
    if (operations.some((op) => op.op === 'fact.delete')) expect(await memory.facts.get('p', 'gone')).toBeUndefined()
    if (last.has('p\u0001kept'))
      expect((await memory.facts.history('p', 'kept')).map((v) => [v.value, v.validTo !== undefined])).toEqual([
        ['lavender', true],
        ['replaced', false],
      ])
    expect((await memory.journal.load('s')).records.map((r) => r.kind)).toEqual(['turn.begin', 'turn.end', 'turn.extracted'])
    memory.close()
  })
})

describe('writes inside an outer transaction of a store without the search module', () => {
  it('a failing operation rolls back the facts and messages written before it', async () => {
    const operations: MemoryOperation[] = [
      { op: 'fact.set', key: 'pet', value: 'cat' },
      { op: 'block.append', projectId: 'missing', label: 'x', text: 'y' },
    ]
    const memory = await createMemory({
      appId: 'test',
      userId: `nested-${Date.now()}`,
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      now: testClock().now,
      modules: [factsModule(), conversationsModule(), archiveModule(), contextModule(), runtimeModule({ extractor: () => operations })],
    })
    await memory.projects.create({ name: 'P', id: 'p' })
    const session = await memory.sessions.create('p', { id: 'chat' })
    await memory.turns.begin('p', { sessionId: session.id, turnId: 't', prompt: 'I got a cat', budget: 100 })
    expect(await memory.turns.end({ sessionId: session.id, turnId: 't', reply: 'Congrats' })).toMatchObject({
      written: 0,
      extractionError: { code: 'not_found' },
    })
    expect(await memory.facts.get('p', 'pet')).toBeUndefined()
    expect((await memory.messages.tail(session.id, 10)).map((m) => m.content)).toEqual(['I got a cat', 'Congrats'])
    await memory.close()
  })

  it('a key set twice in one turn is found by its last value only', async () => {
    const memory = await setup([
      { op: 'fact.set', key: 'twice', value: 'alpha' },
      { op: 'fact.set', key: 'twice', value: 'bravo' },
    ])
    expect(await endTurn(memory)).toEqual({ written: 2 })
    expect((await memory.search('p', 'bravo', { mode: 'text' })).map((h) => h.text)).toEqual(['twice: bravo'])
    expect(await memory.search('p', 'alpha', { mode: 'text' })).toEqual([])
    await memory.facts.set('p', 'twice', 'charlie')
    expect(await memory.search('p', 'bravo', { mode: 'text' })).toEqual([])
    expect((await memory.search('p', 'charlie', { mode: 'text' })).map((h) => h.text)).toEqual(['twice: charlie'])
    memory.close()
  })
})
