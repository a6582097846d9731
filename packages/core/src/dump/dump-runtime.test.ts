import { describe, expect, it } from 'vitest'
import type { Change, Dump } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const roundTrip = (dump: Dump): Dump => JSON.parse(JSON.stringify(dump)) as Dump

/** A store with journal records, a run, a task, usage, lessons and a turn in project p. */
async function fillRuntime() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.sessions.create('p', { id: 's1' })
  await memory.journal.append('s1', { kind: 'step', payload: { n: 1 } })
  clock.advance(10)
  await memory.journal.append('s1', { kind: 'outcome', payload: 'ok', idempotencyKey: 'k1' })
  await memory.journal.append('agent-1', { kind: 'step', payload: null })
  await memory.runs.setCheckpoint('r1', 'plan', { status: 'done' })
  await memory.runs.setStatus('r1', { status: 'running' })
  await memory.tasks.create('p', { description: 'water plants', dueAt: clock.now() + 1000 })
  await memory.usage.append({ sessionId: 's1', projectId: 'p', model: 'gpt-4o', inputTokens: 10, outputTokens: 5 })
  await memory.lessons.create('p', 'code', 'Run the tests first')
  await memory.turns.begin('p', { sessionId: 's1', turnId: 't1', prompt: 'hello', budget: 500 })
  return { memory, clock }
}

describe('export/import of agent runtime memory', () => {
  it('a whole-store round trip keeps journal counters: appends continue the seq and sessions() lists them', async () => {
    const { memory: source } = await fillRuntime()
    const dump = roundTrip(await source.export())
    const target = await openTestMemory()
    await target.import(dump, { mode: 'merge' })
    const next = await target.journal.append('s1', { kind: 'step', payload: 2 })
    expect(next.seq).toBe((await source.journal.load('s1')).lastSeq! + 1)
    expect((await target.journal.append('agent-1', { kind: 'step', payload: 2 })).seq).toBe(2)
    const { items: listed } = await target.journal.sessions({ limit: 10 })
    expect(listed.map((s) => s.sessionId).sort()).toEqual(['agent-1', 's1'])
    expect(listed.find((s) => s.sessionId === 's1')?.count).toBe((await target.journal.load('s1')).records.length)
    // idempotency and approvals still resolve against the imported rows
    expect((await target.journal.append('s1', { kind: 'outcome', payload: 'again', idempotencyKey: 'k1' })).payload).toBe('ok')
  })

  it('a project replace recounts the journal sessions it clears', async () => {
    const { memory } = await fillRuntime()
    const dump = roundTrip(await memory.export('p'))
    await memory.journal.append('s1', { kind: 'extra', payload: null })
    await memory.import(dump, { mode: 'replace' })
    const load = await memory.journal.load('s1')
    const info = (await memory.journal.sessions({ limit: 10 })).items.find((s) => s.sessionId === 's1')
    expect(info?.count).toBe(load.records.length)
    expect((await memory.journal.append('s1', { kind: 'step', payload: 3 })).seq).toBe(load.lastSeq! + 1)
  })

  it('a whole-store replace leaves no journal counters of the old store behind', async () => {
    const { memory } = await fillRuntime()
    const empty = await openTestMemory()
    await memory.import(roundTrip(await empty.export()), { mode: 'replace' })
    expect(await memory.journal.sessions({ limit: 10 })).toEqual({ items: [] })
    expect((await memory.journal.append('s1', { kind: 'step', payload: 1 })).seq).toBe(1)
  })

  it('round-trips turns: a turn begun before export can be ended after import', async () => {
    const { memory: source } = await fillRuntime()
    const target = await openTestMemory()
    await target.import(roundTrip(await source.export()), { mode: 'merge' })
    await expect(target.turns.end({ sessionId: 's1', turnId: 't1', reply: 'hi' })).resolves.toEqual({ written: 0 })
  })

  it('round-trips runs, tasks, usage and lessons', async () => {
    const { memory: source } = await fillRuntime()
    const target = await openTestMemory()
    await target.import(roundTrip(await source.export()), { mode: 'merge' })
    expect(await target.runs.checkpoints('r1')).toEqual(await source.runs.checkpoints('r1'))
    expect(await target.runs.get('r1')).toEqual(await source.runs.get('r1'))
    expect(await target.tasks.list()).toEqual(await source.tasks.list())
    expect(await target.usage.total()).toEqual(await source.usage.total())
    expect(await target.lessons.list('p')).toEqual(await source.lessons.list('p'))
  })

  it('merging the same dump twice does not double usage records or outcomes', async () => {
    const { memory: source } = await fillRuntime()
    await source.lessons.appendOutcome('p', { domain: 'code', score: 1, lesson: 'ok' })
    const dump = roundTrip(await source.export())
    const target = await openTestMemory()
    await target.usage.append({ sessionId: 'other', model: 'gpt-4o', inputTokens: 1, outputTokens: 1 })
    await target.import(dump, { mode: 'merge' })
    await target.import(dump, { mode: 'merge' })
    expect((await target.usage.total()).calls).toBe(2)
    expect((await target.lessons.outcomes('p')).items).toHaveLength(1)
    // and into the store it came from
    await source.import(dump, { mode: 'merge' })
    expect((await source.usage.total()).calls).toBe(1)
    expect((await source.lessons.outcomes('p')).items).toHaveLength(1)
  })

  it('emits journal, runs and usage changes on a whole-store import with the ids their own writes use', async () => {
    const { memory: source } = await fillRuntime()
    const own: Change[] = []
    await source.changes.subscribe({ kinds: ['journal', 'lessons'] }, (b) => own.push(...b))
    await source.journal.append('agent-1', { kind: 'x', payload: null })
    await source.lessons.create('p', 'code', 'Lint too')
    const target = await openTestMemory()
    const batches: Change[][] = []
    await target.changes.subscribe({}, (b) => batches.push(b))
    await target.import(roundTrip(await source.export()), { mode: 'merge' })
    expect(batches).toHaveLength(1)
    const kinds = new Set(batches[0]!.map((c) => c.kind))
    for (const kind of ['journal', 'runs', 'tasks', 'usage', 'lessons'] as const) expect(kinds).toContain(kind)
    const imported = new Set(batches[0]!.map((c) => `${c.kind} ${c.id}`))
    for (const c of own) expect(imported).toContain(`${c.kind} ${c.id}`)
  })

  it('a merge refuses to overwrite a different journal record or message at the same seq (append-only history)', async () => {
    const a = await openTestMemory()
    const b = await openTestMemory()
    for (const m of [a, b]) {
      await m.sessions.create('user', { id: 'shared' })
      await m.journal.append('agent', { kind: 'step', payload: m === a ? 'a' : 'b' })
    }
    await a.messages.append('shared', { role: 'user', content: 'from a' })
    const before = await a.export()
    // b's journal record 'agent'#1 differs from a's
    const journalOnly = roundTrip(await b.export())
    await expect(a.import(journalOnly, { mode: 'merge' })).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/agent.*replace/s) })
    // b's message seq 1 of session 'shared' is another message than a's
    await b.messages.append('shared', { role: 'user', content: 'from b' })
    const dump = roundTrip(await b.export())
    dump.tables.journal = []
    await expect(a.import(dump, { mode: 'merge' })).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/shared/) })
    expect({ ...(await a.export()), exportedAt: 0 }).toEqual({ ...before, exportedAt: 0 })
    // the same rows again (a backup of this store) merge fine
    await expect(a.import(roundTrip(before), { mode: 'merge' })).resolves.toBeDefined()
    // a merged session row with a lower counter does not move the stored one back
    const fresh = await openTestMemory()
    await fresh.sessions.create('user', { id: 'shared' })
    await a.import(roundTrip({ ...(await fresh.export()), tables: { sessions: (await fresh.export()).tables.sessions! } }), { mode: 'merge' })
    expect((await a.messages.append('shared', { role: 'user', content: 'next' })).seq).toBe(2)
  })
})
