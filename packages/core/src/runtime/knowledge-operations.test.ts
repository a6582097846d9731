import { describe, expect, it } from 'vitest'
import type { Memory, MemoryOperation } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'

const MARCH = Date.UTC(2026, 2, 1)
const JUNE = Date.UTC(2026, 5, 1)
const MAY = Date.UTC(2026, 4, 1)

async function withTurns(memory: Memory) {
  await memory.projects.create({ name: 'P', id: 'p' })
  const session = await memory.sessions.create('p')
  let n = 0
  return {
    session,
    async turn(prompt: string) {
      const turnId = `t${++n}`
      await memory.turns.begin('p', { sessionId: session.id, turnId, prompt, budget: 500 })
      return memory.turns.end({ sessionId: session.id, turnId, reply: 'Noted.' })
    },
    async messagesOf(turnId: string) {
      return (await memory.messages.tail(session.id, 50)).filter((m) => (m.meta as { turnId?: string }).turnId === turnId).map((m) => m.id)
    },
  }
}

describe('knowledge operations of an extractor', () => {
  it('an inline extractor relates entities with provenance, closes works_at at the new job, and applied twice writes once', async () => {
    const answers: Record<string, MemoryOperation[]> = {
      'Dana works at Acme': [
        { op: 'entity.upsert', name: 'Dana', type: 'person', observations: ['Likes climbing'], reason: 'named' },
        { op: 'relation.add', subject: 'Dana', predicate: 'works_at', object: 'Acme', objectType: 'organisation', validFrom: MARCH, reason: 'stated' },
      ],
      'Dana now works at Initech': [
        { op: 'relation.add', subject: 'dána', predicate: 'works_at', object: 'Initech', objectType: 'organisation', validFrom: JUNE, reason: 'changed jobs' },
      ],
    }
    const memory = await openTestMemory({ extractor: (exchange) => answers[exchange.prompt] ?? [] })
    const { turn, messagesOf } = await withTurns(memory)
    expect(await turn('Dana works at Acme')).toEqual({ written: 2 })
    expect(await turn('Dana now works at Initech')).toEqual({ written: 1 })
    const dana = (await memory.entities.resolve('p', 'Dana'))!
    expect(dana.observations).toEqual(['Likes climbing'])
    expect(dana.provenance).toEqual({ messageIds: await messagesOf('t1'), source: 'turn:t1' })
    const current = await memory.relations.current('p', dana.id, { predicate: 'works_at' })
    const initech = (await memory.entities.resolve('p', 'Initech'))!
    expect(current.map((r) => r.object)).toEqual([initech.id])
    expect(current[0]!.provenance).toEqual({ messageIds: await messagesOf('t2'), source: 'turn:t2' })
    const before = await memory.relations.asOf('p', dana.id, MAY, { predicate: 'works_at' })
    expect(before.map((r) => r.object)).toEqual([(await memory.entities.resolve('p', 'Acme'))!.id])
    expect((await memory.entities.resolve('p', 'Acme'))!.provenance?.messageIds).toEqual(await messagesOf('t1'))

    // The same answer applied again writes nothing new.
    await turn('Dana works at Acme')
    expect((await memory.relations.history('p', dana.id, 'works_at')).length).toBe(2)
    expect((await memory.entities.list('p')).length).toBe(3)
    await memory.close()
  })

  it('end_relation closes the current relation at a time, and is refused whole when nothing holds', async () => {
    let answer: unknown[] = []
    const memory = await openTestMemory({ extractor: { extract: async () => answer as MemoryOperation[], settings: { maxAttempts: 1 } } })
    const { turn } = await withTurns(memory)
    answer = [{ op: 'relation.add', subject: 'Dana', subjectType: 'person', predicate: 'lives_in', object: 'Lisbon', objectType: 'place', validFrom: MARCH }]
    await turn('Dana lives in Lisbon')
    await memory.extraction.flush()
    answer = [
      { op: 'relation.end', subject: 'Dana', predicate: 'lives_in', at: JUNE, reason: 'moved away' },
      { op: 'relation.end', subject: 'Nobody', predicate: 'lives_in', reason: 'bad' },
      { op: 'relation.add', subject: 'Ghost', predicate: 'likes', object: 'Dana', reason: 'no type: refused' },
      { op: 'relation.add', subject: 'Dana', predicate: 'likes', object: 'dana', reason: 'itself' },
      { op: 'entity.upsert', name: '', type: 'person', reason: 'no name' },
      { op: 'relation.add', subject: 'Dana', subjectType: 'person', predicate: 'likes', object: 'Tea', objectType: 'thing', confidence: 7 },
    ]
    await turn('Dana left Lisbon in June')
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 0 })
    const dana = (await memory.entities.resolve('p', 'Dana'))!
    const [lisbon] = await memory.relations.history('p', dana.id, 'lives_in')
    expect(lisbon?.validTo).toBe(JUNE)
    expect(lisbon?.provenance?.source).toBe('turn:t2')
    // Refused operations wrote nothing (no Ghost, no Tea) and show in the queue's status.
    expect((await memory.entities.list('p')).map((e) => e.name)).toEqual(['Dana', 'Lisbon'])
    const rejected = (await memory.status.get()).extractor.queue?.rejected
    expect(rejected).toMatchObject({ projectId: 'p', turnId: 't2' })
    expect(rejected?.operations.map((o) => [o.index, o.op, o.code])).toEqual([
      [1, 'relation.end', 'not_found'],
      [2, 'relation.add', 'not_found'],
      [3, 'relation.add', 'invalid_input'],
      [4, 'entity.upsert', 'invalid_input'],
      [5, 'relation.add', 'invalid_input'],
    ])
    await memory.close()
  })

  it('an inline extractor sees the turn messages and its fact writes carry them', async () => {
    const memory = await openTestMemory({
      extractor: (exchange) => [{ op: 'fact.set', key: 'seen', value: (exchange.messageIds ?? []).length }],
    })
    const { turn, messagesOf } = await withTurns(memory)
    await turn('hello')
    const fact = await memory.facts.get('p', 'seen')
    expect(fact?.value).toBe(2)
    expect(fact?.source?.messageIds).toEqual(await messagesOf('t1'))
    await memory.close()
  })
})

describe('a turn in flight holds the extraction queue', () => {
  it('a job waits until the project turn in flight has recorded its reply', async () => {
    let memory!: Memory
    const seen: string[][] = []
    memory = await openTestMemory({
      extractor: {
        async extract(exchange) {
          // What the other session holds when the job runs: its turn's prompt and reply, never half of it.
          const other = await memory.messages.tail('s2', 10)
          seen.push([exchange.turnId, ...other.map((m) => m.role)])
          return []
        },
      },
    })
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's1' })
    await memory.sessions.create('p', { id: 's2' })
    await memory.turns.begin('p', { sessionId: 's1', turnId: 'a', prompt: 'first', budget: 100 })
    await memory.turns.begin('p', { sessionId: 's2', turnId: 'b', prompt: 'second', budget: 100 })
    await memory.turns.end({ sessionId: 's1', turnId: 'a', reply: 'one' })
    await memory.turns.end({ sessionId: 's2', turnId: 'b', reply: 'two' })
    await memory.extraction.flush()
    expect(seen).toEqual([
      ['a', 'user', 'assistant'],
      ['b', 'user', 'assistant'],
    ])
    await memory.close()
  })

  it('a turn never ended holds the queue no longer than turnHoldMs', async () => {
    const memory = await openTestMemory({ extractor: { extract: async () => [{ op: 'fact.set', key: 'k', value: 1 }], settings: { turnHoldMs: 20 } } })
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.turns.begin('p', { sessionId: 's1', turnId: 'a', prompt: 'first', budget: 100 })
    await memory.turns.begin('p', { sessionId: 's2', turnId: 'abandoned', prompt: 'never ends', budget: 100 })
    await memory.turns.end({ sessionId: 's1', turnId: 'a', reply: 'one' })
    expect(await memory.extraction.flush()).toEqual({ pending: 0, failed: 0 })
    expect((await memory.facts.get('p', 'k'))?.value).toBe(1)
    await memory.close()
  })
})
