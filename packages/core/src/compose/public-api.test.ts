import { replicationOf } from '@engram/core/internal'
import { describe, expect, it } from 'vitest'
import type { Memory } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/** A store with one of everything the calls below refer to. */
async function seeded() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.sessions.create('p', { id: 's' })
  await memory.facts.set('p', 'k', 1)
  await memory.blocks.set('p', 'b', 'text')
  await memory.archive.create('p', 'a stored passage')
  const task = await memory.tasks.create('p', { description: 'water plants', dueAt: clock.now() + 1000 })
  await memory.turns.begin('p', { sessionId: 's', turnId: 't0', prompt: 'hi', budget: 100 })
  return { memory, clock, taskId: task.id }
}

type Call = [name: string, call: (m: Memory, taskId: string) => Promise<unknown>]

/** One call per options bag of the public API, each with a misspelt option name. */
const typos: Call[] = [
  ['projects.create', (m) => m.projects.create({ name: 'X', sinc: { enabled: true } } as never)],
  ['projects.list', (m) => m.projects.list({ includeArchive: true } as never)],
  ['projects.update', (m) => m.projects.update('p', { nme: 'Y' } as never)],
  ['facts.set', (m) => m.facts.set('p', 'k2', 1, { confidance: 0.5 } as never)],
  ['facts.list', (m) => m.facts.list('p', { tags: 'x' } as never)],
  ['facts.deleteAll', (m) => m.facts.deleteAll('p', { tags: 'x' } as never)],
  ['blocks.set', (m) => m.blocks.set('p', 'b2', 'v', { readonly: true } as never)],
  ['sessions.create', (m) => m.sessions.create('p', { titel: 'x' } as never)],
  ['sessions.list', (m) => m.sessions.list('p', { staus: 'active' } as never)],
  ['sessions.close', (m) => m.sessions.close('s', { sumary: 'x' } as never)],
  ['messages.append', (m) => m.messages.append('s', { role: 'user', content: 'x', metadata: {} } as never)],
  ['messages.page', (m) => m.messages.page('s', { afterSeq: 3 } as never)],
  ['summaries.create', (m) => m.summaries.create('p', { kind: 'project', text: 'x', covers: 1 } as never)],
  ['archive.create', (m) => m.archive.create('p', 'text', { tag: ['x'] } as never)],
  ['archive.list', (m) => m.archive.list('p', { offset: 1 } as never)],
  ['facts.deleted', (m) => m.facts.deleted('p', { offset: 1 } as never)],
  ['context.build', (m) => m.context.build('p', { budget: 10, section: ['facts'] } as never)],
  ['summaries.latest', (m) => m.summaries.latest('p', { session: 's' } as never)],
  ['summaries.list', (m) => m.summaries.list('p', { kinds: ['session'] } as never)],
  ['journal.append', (m) => m.journal.append('j', { kind: 'k', payload: 1, idempotency: 'x' } as never)],
  ['journal.page', (m) => m.journal.page('j', { limit: 1, before: 2 } as never)],
  ['journal.sessions', (m) => m.journal.sessions({ limit: 1, from: 2 } as never)],
  ['runs.setCheckpoint', (m) => m.runs.setCheckpoint('r', 'plan', { status: 'ok', attempts: 2 } as never)],
  ['runs.appendToolEvent', (m) => m.runs.appendToolEvent('r', { tool: 't', status: 'ok', duration: 3 } as never)],
  ['runs.toolEvents', (m) => m.runs.toolEvents('r', { offset: 1 } as never)],
  ['runs.setStatus', (m) => m.runs.setStatus('r', { status: 'ok', sumary: 'x' } as never)],
  ['tasks.create', (m) => m.tasks.create('p', { description: 'feed cat', dueAt: 1, repeats: 'daily' } as never)],
  ['tasks.fail', (m, id) => m.tasks.fail(id, 'boom', { maxRetries: 1, backoff: 5 } as never)],
  ['tasks.update', (m, id) => m.tasks.update(id, { due: 5 } as never)],
  ['tasks.list', (m) => m.tasks.list({ project: 'p' } as never)],
  ['usage.append', (m) => m.usage.append({ sessionId: 's', model: 'm', inputTokens: 1, outputTokens: 1, cachedTokens: 2 } as never)],
  ['lessons.appendOutcome', (m) => m.lessons.appendOutcome('p', { domain: 'd', score: 1, lesson: 'l', sorce: {} } as never)],
  ['lessons.list', (m) => m.lessons.list('p', { domians: 'd' } as never)],
  ['lessons.outcomes', (m) => m.lessons.outcomes('p', { max: 3 } as never)],
  ['turns.begin', (m) => m.turns.begin('p', { sessionId: 's', turnId: 't1', prompt: 'x', budget: 10, buget: 1 } as never)],
  ['turns.end', (m) => m.turns.end({ sessionId: 's', turnId: 't0', reply: 'x', interupted: true } as never)],
  ['turns.partial', (m) => m.turns.partial({ sessionId: 's', turnId: 't0', txt: 'x' } as never)],
  ['import', (m) => m.import({ format: 'engram-dump', version: 1, exportedAt: 0, tables: {} }, { mode: 'merge', dryRun: true } as never)],
  ['changes.subscribe', async (m) => m.changes.subscribe({ kind: ['facts'] } as never, () => {})],
]

describe('public API input checks', () => {
  it.each(typos)('%s rejects an unknown option name with invalid_input and writes nothing', async (name, call) => {
    const { memory, taskId } = await seeded()
    const before = await memory.export()
    const error = await Promise.resolve()
      .then(() => call(memory, taskId))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error, name).toMatchObject({ code: 'invalid_input' })
    expect((error as Error).message).toMatch(/unknown/)
    expect({ ...(await memory.export()), exportedAt: before.exportedAt }).toEqual(before)
  })

  it('changes.subscribe rejects an unknown kind', async () => {
    const { memory } = await seeded()
    await expect(memory.changes.subscribe({ kinds: ['fact' as never] }, () => {})).rejects.toMatchObject({ code: 'invalid_input' })
  })
})

/** One call of every namespace (and every top-level method) of a store. */
const everyNamespace: Call[] = [
  ['projects', (m) => m.projects.list()],
  ['facts', (m) => m.facts.get('p', 'k')],
  ['blocks', (m) => m.blocks.list('p')],
  ['sessions', (m) => m.sessions.get('s')],
  ['messages', (m) => m.messages.tail('s', 5)],
  ['summaries', (m) => m.summaries.list('p')],
  ['archive', (m) => m.archive.create('p', 'text')],
  ['archive.list', (m) => m.archive.list('p')],
  ['search', (m) => m.search('p', 'text')],
  ['context', (m) => m.context.build('p', { budget: 100 })],
  ['journal', (m) => m.journal.load('s')],
  ['runs', (m) => m.runs.get('r')],
  ['tasks', (m) => m.tasks.list()],
  ['usage', (m) => m.usage.total()],
  ['lessons', (m) => m.lessons.list('p')],
  ['turns', (m) => m.turns.begin('p', { sessionId: 's', turnId: 't9', prompt: 'x', budget: 10 })],
  ['limitations', (m) => m.limitations.open()],
  ['patterns', (m) => m.patterns.list('p')],
  ['spaces', (m) => m.spaces.list()],
  ['artifacts', (m) => m.artifacts.list('p')],
  ['people', (m) => m.people.resolve('x')],
  ['adopt', (m) => m.adopt('other')],
  ['changes', async (m) => m.changes.subscribe({}, () => {})],
  ['status', (m) => m.status.get()],
  ['status.subscribe', (m) => m.status.subscribe(() => {})],
  ['sync', (m) => m.sync.status('p')],
  ['sync.isLeader', (m) => m.sync.isLeader()],
  ['replication', (m) => replicationOf(m).pending()],
  ['stats', (m) => m.stats()],
  ['export', (m) => m.export()],
  ['import', (m) => m.import({ format: 'engram-dump', version: 1, exportedAt: 0, tables: {} }, { mode: 'merge' })],
]

describe('a closed store', () => {
  it.each(everyNamespace)('%s fails with closed', async (name, call) => {
    const { memory, taskId } = await seeded()
    await memory.close()
    const error = await Promise.resolve()
      .then(() => call(memory, taskId))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error, name).toMatchObject({ name: 'MemoryError', code: 'closed' })
    expect((error as Error).message).toMatch(/openMemory/)
  })
})

/** One successful write of every kind; each is one transaction. */
const writes: Call[] = [
  ['projects.create', (m) => m.projects.create({ name: 'X' })],
  ['facts.set', (m) => m.facts.set('p', 'k2', 2)],
  ['facts.deleteAll', (m) => m.facts.deleteAll('p')],
  ['blocks.append', (m) => m.blocks.append('p', 'b', 'more')],
  ['sessions.close', (m) => m.sessions.close('s', { summary: 'done' })],
  ['messages.appendExchange', (m) => m.messages.appendExchange('s', 'q', 'a')],
  ['summaries.create', (m) => m.summaries.create('p', { kind: 'project', text: 'x' })],
  ['archive.create', (m) => m.archive.create('p', 'a passage')],
  ['archive.delete', async (m) => m.archive.delete((await m.archive.list('p')).items[0]!.id)],
  ['journal.append', (m) => m.journal.append('j', { kind: 'k', payload: 1 })],
  ['runs.setCheckpoint', (m) => m.runs.setCheckpoint('r', 'plan', { status: 'ok' })],
  ['runs.appendToolEvent', (m) => m.runs.appendToolEvent('r', { tool: 't', status: 'ok' })],
  ['runs.setStatus', (m) => m.runs.setStatus('r', { status: 'ok' })],
  ['tasks.create', (m) => m.tasks.create('p', { description: 'feed the cat', dueAt: 5 })],
  ['tasks.complete', (m, id) => m.tasks.complete(id)],
  ['tasks.fail', (m, id) => m.tasks.fail(id, 'boom', { maxRetries: 2 })],
  ['tasks.cancel', (m, id) => m.tasks.cancel(id)],
  ['usage.append', (m) => m.usage.append({ sessionId: 's', model: 'm', inputTokens: 1, outputTokens: 1 })],
  ['lessons.create', (m) => m.lessons.create('p', 'd', 'rule')],
  ['lessons.appendOutcome', (m) => m.lessons.appendOutcome('p', { domain: 'd', score: 1, lesson: 'l' })],
  ['turns.end', (m) => m.turns.end({ sessionId: 's', turnId: 't0', reply: 'bye' })],
  ['import', async (m) => m.import(await m.export('p'), { mode: 'merge' })],
]

/** The same kinds, failing after validation (inside or before the transaction). */
const failures: Call[] = [
  ['facts.set unknown project', (m) => m.facts.set('nope', 'k', 1)],
  ['blocks.append over limit', (m) => m.blocks.append('p', 'b', 'x'.repeat(5000))],
  ['messages.append unknown session', (m) => m.messages.append('nope', { role: 'user', content: 'x' })],
  ['tasks.complete unknown', (m) => m.tasks.complete('nope')],
  ['lessons.create unknown project', (m) => m.lessons.create('nope', 'd', 'r')],
  ['turns.end unknown turn', (m) => m.turns.end({ sessionId: 's', turnId: 'nope', reply: 'x' })],
  [
    'import bad reference',
    (m) =>
      m.import(
        {
          format: 'engram-dump',
          version: 1,
          exportedAt: 0,
          tables: { tasks: [{ id: 't', projectId: 'nope', description: 'd', dueAt: 0, status: 'pending' }] },
        },
        { mode: 'merge' },
      ),
  ],
]

describe('the change feed', () => {
  it.each(writes)('%s emits exactly one batch', async (name, call) => {
    const { memory, taskId } = await seeded()
    const batches: unknown[][] = []
    await memory.changes.subscribe({}, (b) => batches.push(b))
    await call(memory, taskId)
    expect(batches, name).toHaveLength(1)
    expect(batches[0]!.length).toBeGreaterThan(0)
  })

  it.each(failures)('%s emits nothing and writes nothing', async (name, call) => {
    const { memory, taskId } = await seeded()
    const before = await memory.export()
    const batches: unknown[][] = []
    await memory.changes.subscribe({}, (b) => batches.push(b))
    await expect(
      Promise.resolve().then(() => call(memory, taskId)),
      name,
    ).rejects.toBeInstanceOf(Error)
    expect(batches).toEqual([])
    expect({ ...(await memory.export()), exportedAt: before.exportedAt }).toEqual(before)
  })
})

describe('garbage arguments', () => {
  const namespaces = [
    'projects',
    'facts',
    'blocks',
    'sessions',
    'messages',
    'summaries',
    'archive',
    'context',
    'journal',
    'runs',
    'tasks',
    'usage',
    'lessons',
    'turns',
    'limitations',
    'patterns',
    'spaces',
    'artifacts',
    'people',
    'status',
    'sync',
  ] as const
  const garbage: unknown[] = [null, 42, 'x', [], {}, NaN, () => 1, Symbol('s')]

  it('every method of every namespace fails with a MemoryError, never a TypeError', async () => {
    const { memory } = await seeded()
    const leaks: string[] = []
    for (const ns of namespaces) {
      const api = memory[ns] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      for (const method of Object.keys(api)) {
        for (const value of garbage) {
          for (let position = 0; position < 4; position++) {
            const args: unknown[] = ['p', 's', 'x', {}]
            args[position] = value
            try {
              await api[method]!(...args)
            } catch (error) {
              if (!(error instanceof Error) || error.name !== 'MemoryError') leaks.push(`${ns}.${method} arg ${position} = ${String(value)}: ${String(error)}`)
            }
          }
        }
      }
    }
    for (const [name, call] of [
      ['stats', () => memory.stats(null as never)],
      ['export', () => memory.export(42 as never)],
      ['import', () => memory.import({} as never, null as never)],
      ['adopt', () => memory.adopt(null as never)],
      ['subscribe', async () => memory.changes.subscribe(null as never, null as never)],
    ] as const) {
      try {
        await call()
      } catch (error) {
        if ((error as Error).name !== 'MemoryError') leaks.push(`${name}: ${String(error)}`)
      }
    }
    expect(leaks).toEqual([])
  })
})
