import { createMemory, factsModule, MemoryError } from '@engram/core'
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph'
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { EngramSaver } from './engram-saver.js'

const thread = (id: string) => ({ configurable: { thread_id: id, checkpoint_ns: '' } })

describe('EngramSaver', () => {
  it('stores a checkpoint and a pending write over the 1 MiB record limit, in pieces, and reads them back', async () => {
    const memory = await openTestMemory()
    const saver = new EngramSaver(memory)
    const big = 'é🙂x\u0000'.repeat(400_000) // ~1.6 M UTF-16 units, with escapes and astral characters
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(0), channel_values: { doc: big }, channel_versions: { doc: 1 } }
    const config = await saver.put(thread('big'), checkpoint, { source: 'input', step: -1, parents: {} }, { doc: 1 })
    await saver.putWrites(config, [['doc', big]], 'task-1')
    const tuple = await saver.getTuple(config)
    expect(tuple?.checkpoint.channel_values.doc).toBe(big)
    expect(tuple?.pendingWrites).toEqual([['task-1', 'doc', big]])
    const pieces = (await memory.runs.checkpoints(`langgraph/big//channel/doc/1`)).filter((p) => p.status === 'piece')
    expect(pieces.length).toBeGreaterThan(1)
  })

  it('keeps a regular write already stored and replaces special ones, like MemorySaver', async () => {
    const saver = new EngramSaver(await openTestMemory())
    const config = await saver.put(thread('w'), { ...emptyCheckpoint(), id: uuid6(0) }, { source: 'input', step: -1, parents: {} }, {})
    await saver.putWrites(
      config,
      [
        ['a', 1],
        ['__error__', 'first'],
      ],
      't',
    )
    await saver.putWrites(
      config,
      [
        ['a', 2],
        ['__error__', 'second'],
      ],
      't',
    )
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ['t', '__error__', 'second'],
      ['t', 'a', 1],
    ])
  })

  it('deletes every trace of a thread and only that thread', async () => {
    const memory = await openTestMemory()
    const saver = new EngramSaver(memory)
    const meta = { source: 'input' as const, step: -1, parents: {} }
    const a = await saver.put(thread('a'), { ...emptyCheckpoint(), id: uuid6(0), channel_values: { x: 1 }, channel_versions: { x: 1 } }, meta, { x: 1 })
    await saver.putWrites(a, [['x', 2]], 't')
    await saver.put(thread('b'), { ...emptyCheckpoint(), id: uuid6(0) }, meta, {})
    await saver.deleteThread('a')
    expect(await saver.getTuple(thread('a'))).toBeUndefined()
    for (const run of [
      'langgraph/a',
      `langgraph/a//${a.configurable?.checkpoint_id}`,
      `langgraph/a//${a.configurable?.checkpoint_id}/writes`,
      'langgraph/a//channel/x/1',
    ]) {
      expect(await memory.runs.checkpoints(run)).toEqual([])
    }
    const listed = []
    for await (const t of saver.list({})) listed.push(t.config.configurable?.thread_id)
    expect(listed).toEqual(['b'])
  })

  it('runs a graph that waits for approval, and resumes it from IndexedDB after reopening', async () => {
    const State = Annotation.Root({
      request: Annotation<string>(),
      approved: Annotation<boolean>(),
      log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
    })
    const build = (saver: EngramSaver) =>
      new StateGraph(State)
        .addNode('plan', () => ({ log: ['planned'] }))
        .addNode('approve', () => ({ approved: interrupt<string, boolean>('approve the plan?'), log: ['asked'] }))
        .addNode('act', (s) => ({ log: [s.approved ? 'acted' : 'skipped'] }))
        .addEdge(START, 'plan')
        .addEdge('plan', 'approve')
        .addEdge('approve', 'act')
        .addEdge('act', END)
        .compile({ checkpointer: saver })
    const indexedDB = new IDBFactory()
    const config = { configurable: { thread_id: 'approval' } }
    const first = await openTestMemory({ indexedDB, userId: 'graph' })
    const paused = await build(new EngramSaver(first)).invoke({ request: 'ship it' }, config)
    expect((paused as { __interrupt__?: { value: unknown }[] }).__interrupt__?.[0]?.value).toBe('approve the plan?')
    await first.close()

    const second = await openTestMemory({ indexedDB, userId: 'graph' })
    const graph = build(new EngramSaver(second))
    expect((await graph.getState(config)).next).toEqual(['approve'])
    const done = await graph.invoke(new Command({ resume: true }), config)
    expect(done).toEqual({ request: 'ship it', approved: true, log: ['planned', 'asked', 'acted'] })
  })

  it('refuses bad options and configs with MemoryError codes', async () => {
    const facts = await createMemory({ appId: 'saver', userId: 'facts-only', indexedDB: new IDBFactory(), IDBKeyRange, modules: [factsModule()] })
    expect(() => new EngramSaver(facts as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    const memory = await openTestMemory()
    expect(() => new EngramSaver(memory, { prefx: 'x' } as never)).toThrow(MemoryError)
    expect(() => new EngramSaver(memory, { prefix: ' padded' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    const saver = new EngramSaver(memory)
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(0) }
    await expect(saver.put({ configurable: {} }, checkpoint, { source: 'input', step: -1, parents: {} }, {})).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(saver.putWrites(thread('t'), [], 't')).rejects.toMatchObject({ code: 'invalid_input' })
    const huge = { source: 'input' as const, step: -1, parents: {}, note: 'x'.repeat(200_000) }
    await expect(saver.put(thread('t'), checkpoint, huge, {})).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect(await saver.getTuple(thread('t'))).toBeUndefined()
  })
})
