import { describe, expect, it } from 'vitest'
import { openTestContext } from '../../../../test/support/core-context.js'
import type { Change, Dump, Memory } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { createDump } from './dump.js'
import { createImporter } from './dump-importer.js'
import { createMessages } from '../messages/messages.js'
import { createProjects } from '../projects/projects.js'
import { createSessions } from '../sessions/sessions.js'

/** Fills a store with a bit of every core kind in projects p and q. */
async function fill(memory: Memory): Promise<{ session: string }> {
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.projects.create({ name: 'Q', id: 'q' })
  await memory.facts.set('p', 'city', 'Oslo', { tags: ['geo'] })
  await memory.facts.set('p', 'gone', 1)
  await memory.facts.delete('p', 'gone')
  await memory.facts.set('q', 'lang', 'nb')
  await memory.facts.set('user', 'name', 'Ada')
  await memory.blocks.set('p', 'persona', 'Friendly')
  const s = await memory.sessions.create('p', { id: 's1', title: 'Chat' })
  await memory.messages.appendExchange(s.id, 'Where do I live?', 'In Oslo.')
  await memory.sessions.create('q', { id: 's2' })
  await memory.messages.append('s2', { role: 'user', content: 'Hei', meta: { lang: 'nb' } })
  await memory.summaries.create('p', { kind: 'project', text: 'Ada lives in Oslo' })
  return { session: s.id }
}

const roundTrip = (dump: Dump): Dump => JSON.parse(JSON.stringify(dump)) as Dump

async function content(memory: Memory, projectId: string) {
  return {
    facts: await memory.facts.list(projectId),
    deleted: await memory.facts.deleted(projectId),
    blocks: await memory.blocks.list(projectId),
    sessions: await memory.sessions.list(projectId),
    summaries: await memory.summaries.list(projectId),
    messages: await Promise.all((await memory.sessions.list(projectId)).items.map((s) => memory.messages.tail(s.id, 100))),
  }
}

describe('stats', () => {
  it('counts live memory per project and in the whole store', async () => {
    const memory = await openTestMemory()
    expect(await memory.stats()).toMatchObject({ facts: 0, blocks: 0, sessions: 0, messages: 0, passages: 0 })
    await fill(memory)
    const p = await memory.stats('p')
    expect(p).toMatchObject({ facts: 1, blocks: 1, sessions: 1, messages: 2, passages: 0 })
    expect(p.bytes).toBeGreaterThan(JSON.stringify(await memory.messages.tail('s1', 2)).length)
    const all = await memory.stats()
    expect(all).toMatchObject({ facts: 3, blocks: 1, sessions: 2, messages: 3, passages: 0 })
    expect(all.bytes).toBeGreaterThan(p.bytes)
    await expect(memory.stats('nope')).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.stats(' p')).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('counts bytes as UTF-8, not UTF-16 code units', async () => {
    const memory = await openTestMemory()
    const before = (await memory.stats()).bytes
    await memory.facts.set('user', 'k', 'ø'.repeat(1000))
    const grown = (await memory.stats()).bytes - before
    // The value is stored on the fact and its history version: 2 × 2,000 bytes at least.
    expect(grown).toBeGreaterThanOrEqual(4000)
  })
})

describe('export', () => {
  it('exports a versioned JSON-safe dump of every memory table', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    await fill(memory)
    const dump = await memory.export()
    expect(dump).toMatchObject({ format: 'engram-dump', version: 1, exportedAt: clock.now() })
    expect(dump).not.toHaveProperty('projectId')
    expect(Object.keys(dump.tables).sort()).toEqual([
      'artifacts',
      'blocks',
      'checkpoints',
      'entities',
      'factVersions',
      'facts',
      'journal',
      'lessons',
      'limitations',
      'messages',
      'observations',
      'outcomes',
      'passages',
      'patterns',
      'people',
      'projects',
      'relations',
      'runs',
      'sessions',
      'spaces',
      'summaries',
      'tasks',
      'toolEvents',
      'turns',
      'usage',
    ])
    expect(roundTrip(dump)).toEqual(dump)
    expect(dump.tables.projects!.map((p) => (p as { id: string }).id).sort()).toEqual(['p', 'q', 'user'])
    expect(dump.tables.messages).toHaveLength(3)
  })

  it('exports one project only', async () => {
    const memory = await openTestMemory()
    await fill(memory)
    const dump = await memory.export('p')
    expect(dump.projectId).toBe('p')
    expect(dump.tables.projects).toEqual([expect.objectContaining({ id: 'p' })])
    for (const [table, rows] of Object.entries(dump.tables)) {
      for (const row of rows as Record<string, unknown>[]) if (table !== 'projects') expect(row.projectId).toBe('p')
    }
    expect(dump.tables.facts).toHaveLength(2)
    expect(dump.tables.messages).toHaveLength(2)
    await expect(memory.export('nope')).rejects.toMatchObject({ code: 'not_found' })
  })
})

describe('import', () => {
  it('merges a whole-store dump into an empty store, losing nothing', async () => {
    const source = await openTestMemory()
    await fill(source)
    const dump = roundTrip(await source.export())
    const target = await openTestMemory()
    const rows = Object.values(dump.tables).reduce((n, r) => n + r.length, 0)
    expect(await target.import(dump, { mode: 'merge' })).toEqual({ written: rows })
    for (const p of ['p', 'q', 'user']) expect(await content(target, p)).toEqual(await content(source, p))
    expect(await target.facts.history('p', 'gone')).toEqual(await source.facts.history('p', 'gone'))
    expect(await target.stats()).toEqual(await source.stats())
    // seq continues after the imported messages
    expect((await target.messages.append('s1', { role: 'user', content: 'next' })).seq).toBe(3)
  })

  it('replaces one project and leaves the others alone', async () => {
    const source = await openTestMemory()
    await fill(source)
    const dump = roundTrip(await source.export('p'))
    const target = await openTestMemory()
    await fill(target)
    await target.facts.set('p', 'extra', true)
    await target.sessions.create('p', { id: 'extra-session' })
    const qBefore = await content(target, 'q')
    const batches: Change[][] = []
    await target.changes.subscribe({}, (b) => batches.push(b))
    await target.import(dump, { mode: 'replace' })
    expect(await content(target, 'p')).toEqual(await content(source, 'p'))
    expect(await target.sessions.get('extra-session')).toBeUndefined()
    expect(await content(target, 'q')).toEqual(qBefore)
    expect(batches).toHaveLength(1)
    expect(batches[0]).toContainEqual(expect.objectContaining({ kind: 'facts', op: 'delete', projectId: 'p' }))
    expect(batches[0]!.every((c) => c.projectId === 'p')).toBe(true)
  })

  it('replaces the whole store and keeps the user project', async () => {
    const source = await openTestMemory()
    await source.projects.create({ name: 'Only', id: 'only', sync: { enabled: true } })
    await source.facts.set('only', 'k', 'v')
    const dump = roundTrip(await source.export())
    dump.tables.projects = dump.tables.projects!.filter((p) => (p as { id: string }).id !== 'user')
    dump.tables.facts = dump.tables.facts!.filter((f) => (f as { projectId: string }).projectId !== 'user')
    const target = await openTestMemory()
    await fill(target)
    await target.import(dump, { mode: 'replace' })
    expect((await target.projects.list()).map((p) => p.id).sort()).toEqual(['only', 'user'])
    expect(await target.stats()).toMatchObject({ facts: 1, sessions: 0, messages: 0, blocks: 0 })
    expect(await target.facts.get('only', 'k')).toMatchObject({ value: 'v' })
  })

  it('merges twice without duplicating rows', async () => {
    const source = await openTestMemory()
    await fill(source)
    const dump = roundTrip(await source.export('p'))
    const target = await openTestMemory()
    await target.projects.create({ name: 'P', id: 'p' })
    await target.import(dump, { mode: 'merge' })
    await target.import(dump, { mode: 'merge' })
    expect(await target.stats('p')).toEqual(await source.stats('p'))
  })

  it('raises lastSeq when merged messages go past a stored session', async () => {
    const source = await openTestMemory()
    await source.projects.create({ name: 'P', id: 'p' })
    await source.sessions.create('p', { id: 's' })
    for (let i = 0; i < 4; i++) await source.messages.append('s', { role: 'user', content: `m${i}` })
    const dump = roundTrip(await source.export('p'))
    dump.tables.sessions = []
    const target = await openTestMemory()
    await target.projects.create({ name: 'P', id: 'p' })
    await target.sessions.create('p', { id: 's' })
    await target.import(dump, { mode: 'merge' })
    expect((await target.messages.append('s', { role: 'user', content: 'after' })).seq).toBe(5)
  })

  it('rejects malformed dumps with invalid_input and writes nothing', async () => {
    const source = await openTestMemory()
    await fill(source)
    const good = roundTrip(await source.export())
    const target = await openTestMemory()
    await target.projects.create({ name: 'Mine', id: 'mine' })
    const before = await target.export()
    const seen: Change[] = []
    await target.changes.subscribe({}, (b) => seen.push(...b))
    const variant = (edit: (d: Dump) => void): Dump => {
      const d = roundTrip(good)
      edit(d)
      return d
    }
    const bad: unknown[] = [
      null,
      'dump',
      [],
      variant((d) => void ((d as { format: string }).format = 'other')),
      variant((d) => void (d.version = 2)),
      variant((d) => void ((d as { exportedAt: unknown }).exportedAt = 'now')),
      variant((d) => void ((d as { tables: unknown }).tables = [])),
      variant((d) => void (d.tables.postings = [])),
      variant((d) => void (d.tables.outbox = [])),
      variant((d) => void ((d.tables as Record<string, unknown>).facts = {})),
      variant((d) => void d.tables.messages!.push('row')),
      variant((d) => void delete (d.tables.messages![0] as Record<string, unknown>).sessionId),
      variant((d) => void ((d.tables.messages![0] as Record<string, unknown>).seq = '1')),
      variant((d) => void delete (d.tables.facts![0] as Record<string, unknown>).value),
      variant((d) => void delete (d.tables.projects![0] as Record<string, unknown>).id),
      variant((d) => void (d.projectId = 'p')),
      variant((d) => void (d.tables.projects = [])),
      variant((d) => void (d.tables.sessions = [])),
    ]
    for (const dump of bad) {
      await expect(target.import(dump as Dump, { mode: 'merge' })).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(target.import(dump as Dump, { mode: 'replace' })).rejects.toMatchObject({ code: 'invalid_input' })
    }
    await expect(target.import(good, { mode: 'upsert' as never })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(target.import(good, undefined as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(seen).toEqual([])
    expect({ ...(await target.export()), exportedAt: 0 }).toEqual({ ...before, exportedAt: 0 })
  })

  it('rejects a replace whose rows name projects the replaced store will not have', async () => {
    const target = await openTestMemory()
    await target.projects.create({ name: 'Kept', id: 'kept' })
    const dump: Dump = {
      format: 'engram-dump',
      version: 1,
      exportedAt: 0,
      tables: { facts: [{ id: 'x', projectId: 'kept', key: 'k', value: 1, version: 1, createdAt: 0, updatedAt: 0 }] },
    }
    await expect(target.import(dump, { mode: 'replace' })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await target.projects.get('kept')).toBeDefined()
    expect(await target.import(dump, { mode: 'merge' })).toEqual({ written: 1 })
  })

  it('fills defaults of hand-written fact and block rows so they read like stored ones', async () => {
    const target = await openTestMemory()
    const dump: Dump = {
      format: 'engram-dump',
      version: 1,
      exportedAt: 0,
      tables: {
        facts: [
          { id: 'a', projectId: 'user', key: 'a', value: 1, version: 1, createdAt: 0, updatedAt: 0 },
          { id: 'b', projectId: 'user', key: 'b', value: 2, version: 1, createdAt: 0, updatedAt: 0, tags: ['x'] },
        ],
        blocks: [{ projectId: 'user', label: 'persona', value: 'hi', limit: 100 }],
      },
    }
    await target.import(dump, { mode: 'merge' })
    expect(await target.facts.get('user', 'a')).toMatchObject({ value: 1, tags: [], confidence: 1 })
    expect((await target.facts.list('user', { tag: 'x' })).items.map((f) => f.key)).toEqual(['b'])
    expect(await target.blocks.get('user', 'persona')).toMatchObject({ value: 'hi', readOnly: false })
  })

  it("rejects rows with values outside a field's set or of the wrong type", async () => {
    const target = await openTestMemory()
    const before = await target.export()
    const base = { format: 'engram-dump' as const, version: 1, exportedAt: 0 }
    const session = { id: 's', projectId: 'user', status: 'active', startedAt: 0, lastActiveAt: 0 }
    const message = { id: 'm', sessionId: 's', projectId: 'user', seq: 1, role: 'user', content: 'x', tokens: 1, createdAt: 0 }
    const bad: Dump['tables'][] = [
      { sessions: [{ ...session, status: 'paused' }] },
      { sessions: [session], messages: [{ ...message, role: 'bot' }] },
      { sessions: [session], messages: [{ ...message, seq: 0 }] },
      { sessions: [session], messages: [{ ...message, seq: 1.5 }] },
      { summaries: [{ id: 'x', projectId: 'user', kind: 'weekly', text: 't', createdAt: 0 }] },
      { facts: [{ id: 'a', projectId: 'user', key: 'a', value: 1, version: 1, createdAt: 0, updatedAt: 0, tags: 'x' }] },
      { facts: [{ id: 'a', projectId: 'user', key: 'a', value: 1, version: 1, createdAt: 0, updatedAt: 0, confidence: 2 }] },
      { blocks: [{ projectId: 'user', label: 'l', value: 'v', limit: 100, readOnly: 'no' }] },
      { journal: [{ sessionId: 'j', seq: -1, kind: 'k', payload: null, occurredAt: 0 }] },
      { tasks: [{ id: 't', projectId: 'user', description: 'd', dueAt: 0, status: 'later' }] },
    ]
    for (const tables of bad) {
      await expect(target.import({ ...base, tables }, { mode: 'merge' }), JSON.stringify(tables)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    expect({ ...(await target.export()), exportedAt: 0 }).toEqual({ ...before, exportedAt: 0 })
  })

  it('rebuilds the search index for imported rows; a dump does not turn sync on', async () => {
    const dump = await filledDumpWithSyncOn()
    const { ctx, docs } = await openContext()
    await createImporter(ctx)(dump, { mode: 'replace' })
    // The dump's project synced where it was exported; here it starts unsynced, so nothing is queued.
    expect([...ctx.syncedProjects]).toEqual([])
    expect(await ctx.db.outbox.toArray()).toEqual([])
    const kinds = [...docs.values()].map((d) => d.kind).sort()
    expect(kinds).toEqual(['fact', 'fact', 'fact', 'message', 'message', 'message', 'summary'])
    const message = (dump.tables.messages as { id: string }[])[0]!
    expect(docs.get(`message:${message.id}`)).toMatchObject({ kind: 'message', projectId: 'p', sessionId: 's1', text: 'Where do I live?' })
    expect([...docs.values()].find((d) => d.kind === 'fact' && d.projectId === 'p')?.text).toBe('city: Oslo')
  })

  it('rolls the whole import back when a write fails midway', async () => {
    const dump = await filledDumpWithSyncOn()
    const { ctx, docs } = await openContext()
    const api = createDump(ctx)
    const before = await api.export()
    const seen: Change[] = []
    ctx.feed.subscribe({}, (b) => seen.push(...b))
    ctx.index.put = async (_w, doc) => {
      if (doc.kind === 'summary') throw new Error('index broke')
      docs.set(doc.docId, doc)
    }
    await expect(createImporter(ctx)(dump, { mode: 'replace' })).rejects.toMatchObject({ code: 'internal' })
    expect({ ...(await api.export()), exportedAt: 0 }).toEqual({ ...before, exportedAt: 0 })
    expect(seen).toEqual([])
    expect(ctx.syncedProjects.size).toBe(0)
    expect(await ctx.db.outbox.count()).toBe(0)
  })

  it('imports thousands of rows when the index touches no table (keeps the transaction zone)', async () => {
    const { ctx, docs } = await openContext()
    const messages = Array.from({ length: 1500 }, (_, i) => ({
      id: `m${i}`,
      sessionId: 's',
      projectId: 'user',
      seq: i + 1,
      role: 'user',
      content: `hello ${i}`,
      tokens: 2,
      createdAt: i,
    }))
    const dump: Dump = {
      format: 'engram-dump',
      version: 1,
      exportedAt: 0,
      tables: { sessions: [{ id: 's', projectId: 'user', status: 'active', startedAt: 0, lastActiveAt: 0 }], messages },
    }
    expect(await createImporter(ctx)(dump, { mode: 'merge' })).toEqual({ written: 1501 })
    expect(docs.size).toBe(1500)
    expect(await ctx.db.sessions.get('s')).toMatchObject({ lastSeq: 1500 })
  })

  it('indexes messages as they are appended', async () => {
    const { ctx, docs } = await openContext()
    await createProjects(ctx).create({ name: 'P', id: 'p' })
    const s = await createSessions(ctx).create('p')
    const [u] = await createMessages(ctx).appendExchange(s.id, 'hello there', 'hi')
    expect(docs.get(`message:${u.id}`)).toEqual({
      docId: `message:${u.id}`,
      kind: 'message',
      projectId: 'p',
      sessionId: s.id,
      text: 'hello there',
      createdAt: u.createdAt,
    })
    expect(docs.size).toBe(2)
  })

  it('dumps appended messages with their stamp and sessions without lastAt; import keeps the restore complete', async () => {
    const { ctx, clock } = await openTestContext()
    await createProjects(ctx).create({ name: 'P', id: 'p' })
    const s = await createSessions(ctx).create('p', { id: 's' })
    const [m1] = await createMessages(ctx).appendExchange(s.id, 'hello', 'hi')
    const stored = (await ctx.db.messages.get(m1.id))!
    expect(stored.hlc).toBeUndefined()
    const dump = roundTrip(await createDump(ctx).export('p'))
    // As dumps were before appends left out their stamp.
    for (const m of dump.tables.messages as { at: string; hlc: string }[]) expect(m.hlc).toBe(m.at)
    expect(dump.tables.sessions![0]).not.toHaveProperty('lastAt')

    // Into another store: the imported messages are stored as appends are, their session's lastAt the highest stamp.
    const other = (await openTestContext()).ctx
    await createImporter(other)(dump, { mode: 'replace' })
    expect((await other.db.messages.get(m1.id))!.hlc).toBeUndefined()
    const highest = (dump.tables.messages as { at: string }[])
      .map((m) => m.at)
      .sort()
      .at(-1)
    expect((await other.db.sessions.get('s'))!.lastAt).toBe(highest)
    expect(roundTrip(await createDump(other).export('p'))).toEqual({ ...dump, exportedAt: expect.any(Number) })

    // A message with an order key but no stamp (a hand-made dump) imports with its key's stamp; a dump's lastAt is not taken.
    // A message edited after its append keeps its own stamp.
    const handMade = roundTrip(dump)
    const [first, second] = handMade.tables.messages as Record<string, unknown>[]
    delete first!.hlc
    second!.hlc = '1767225600001.00009.devZ'
    ;(handMade.tables.sessions![0] as Record<string, unknown>).lastAt = '9999999999999.00000.dump'
    const third = (await openTestContext()).ctx
    await createImporter(third)(handMade, { mode: 'replace' })
    expect((await third.db.messages.get(first!.id as string))!.hlc).toBeUndefined()
    expect((await third.db.messages.get(second!.id as string))!.hlc).toBe('1767225600001.00009.devZ')
    expect((await third.db.sessions.get('s'))!.lastAt).toBe(first!.at)

    // A merge over the store's own session keeps the stamp of the messages appended here since.
    clock.advance(1000)
    const [later] = await createMessages(ctx).appendMany(s.id, [{ role: 'user', content: 'after the export' }])
    const lastAt = (await ctx.db.sessions.get('s'))!.lastAt
    expect(lastAt).toBe((await ctx.db.messages.get(later!.id))!.at)
    await createImporter(ctx)(dump, { mode: 'merge' })
    expect((await ctx.db.sessions.get('s'))!.lastAt).toBe(lastAt)
    await expect(createImporter(ctx)({ ...dump, tables: { ...dump.tables, messages: [{ ...first, at: 5 }] } }, { mode: 'merge' })).rejects.toMatchObject({
      code: 'invalid_input',
    })
  })

  it('fails with closed after close()', async () => {
    const memory = await openTestMemory()
    const dump = await memory.export()
    await memory.close()
    await expect(memory.export()).rejects.toMatchObject({ code: 'closed' })
    await expect(memory.stats()).rejects.toMatchObject({ code: 'closed' })
    await expect(memory.import(dump, { mode: 'merge' })).rejects.toMatchObject({ code: 'closed' })
  })
})

/** A dump of a filled store in which project `p` has sync on. */
async function filledDumpWithSyncOn(): Promise<Dump> {
  const source = await openTestMemory()
  await fill(source)
  const dump = roundTrip(await source.export())
  ;(dump.tables.projects!.find((p) => (p as { id: string }).id === 'p') as { sync: { enabled: boolean } }).sync.enabled = true
  return dump
}

async function openContext() {
  const { ctx, docs } = await openTestContext()
  return { ctx, docs }
}
