import { describe, expect, it } from 'vitest'
import { openTestContext } from '../../../../test/support/core-context.js'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { formatHlc } from '../store/hlc.js'
import { createProjects } from '../projects/projects.js'
import type { SummaryRow } from '../store/rows.js'
import { createSessions } from '../sessions/sessions.js'
import { createSummaries } from './summaries.js'
import { summaryTables } from './summary-rows.js'
import { syncedSummaries } from './summaries-sync.js'
import type { StoreContext } from '../store/store-context.js'
import { write } from '../store/write.js'

const readSummaryForSync = (ctx: StoreContext, id: string) => syncedSummaries.read(ctx, '', id)

async function openContext() {
  const { ctx, clock, docs } = await openTestContext()
  const projects = createProjects(ctx)
  await projects.create({ name: 'P', id: 'p' })
  return { ctx, clock, docs, projects, sessions: createSessions(ctx), summaries: createSummaries(ctx) }
}

async function setup() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.projects.create({ name: 'Q', id: 'q' })
  await memory.sessions.create('p', { id: 's' })
  await memory.sessions.create('q', { id: 'sq' })
  return { clock, memory }
}

describe('summaries', () => {
  it('writes and reads back latest and list, newest first', async () => {
    const { clock, memory } = await setup()
    const a = await memory.summaries.create('p', { kind: 'project', text: 'first', coversUntil: 5 })
    expect(a).toEqual({ id: a.id, projectId: 'p', kind: 'project', text: 'first', coversUntil: 5, createdAt: clock.now() })
    clock.advance(10)
    const b = await memory.summaries.create('p', { sessionId: 's', kind: 'session', text: 'second' })
    clock.advance(10)
    const c = await memory.summaries.create('p', { kind: 'project', text: 'third' })
    await memory.summaries.create('q', { sessionId: 'sq', kind: 'session', text: 'other project' })
    expect((await memory.summaries.list('p')).items.map((s) => s.text)).toEqual(['third', 'second', 'first'])
    expect((await memory.summaries.list('p', { kind: 'project' })).items.map((s) => s.id)).toEqual([c.id, a.id])
    const firstPage = await memory.summaries.list('p', { limit: 1 })
    expect(firstPage.items.map((s) => s.id)).toEqual([c.id])
    expect(firstPage.next).toEqual(expect.any(String))
    expect((await memory.summaries.list('p', { after: firstPage.next })).items.map((s) => s.id)).toEqual([b.id, a.id])
    expect(await memory.summaries.latest('p')).toEqual(c)
    expect(await memory.summaries.latest('p', { kind: 'session' })).toEqual(b)
    expect(await memory.summaries.latest('p', { sessionId: 's' })).toEqual(b)
    expect(await memory.summaries.latest('p', { sessionId: 's', kind: 'project' })).toBeUndefined()
    expect(await memory.summaries.latest('p', { sessionId: 'sq' })).toBeUndefined()
    expect(await memory.summaries.latest('nope')).toBeUndefined()
    expect(await memory.summaries.list('nope')).toEqual({ items: [] })
  })

  it('orders summaries written in the same millisecond by creation', async () => {
    const { memory } = await setup()
    for (const text of ['a', 'b', 'c']) await memory.summaries.create('p', { kind: 'project', text })
    expect((await memory.summaries.latest('p'))?.text).toBe('c')
    expect((await memory.summaries.list('p')).items.map((s) => s.text)).toEqual(['c', 'b', 'a'])
  })

  it('rejects bad input and unknown references, writing nothing', async () => {
    const { memory } = await setup()
    await memory.projects.create({ name: 'A', id: 'arch' })
    await memory.projects.archive('arch')
    const seen: Change[] = []
    await memory.changes.subscribe({}, (b) => seen.push(...b))
    const bad: [() => Promise<unknown>, string][] = [
      [() => memory.summaries.create('p', { kind: 'session', text: 'x' }), 'invalid_input'],
      [() => memory.summaries.create('p', { sessionId: 'nope', kind: 'session', text: 'x' }), 'not_found'],
      [() => memory.summaries.create('p', { sessionId: 'sq', kind: 'session', text: 'x' }), 'not_found'],
      [() => memory.summaries.create('nope', { kind: 'project', text: 'x' }), 'not_found'],
      [() => memory.summaries.create('arch', { kind: 'project', text: 'x' }), 'not_found'],
      [() => memory.summaries.create('p', { kind: 'rolling' as never, text: 'x' }), 'invalid_input'],
      [() => memory.summaries.create('p', { kind: 'project', text: '  ' }), 'invalid_input'],
      [() => memory.summaries.create('p', { kind: 'project', text: 'x'.repeat(100_001) }), 'limit_exceeded'],
      [() => memory.summaries.create('p', { kind: 'project', text: 'x', coversUntil: -1 }), 'invalid_input'],
      [() => memory.summaries.create('p', null as never), 'invalid_input'],
      [() => memory.summaries.latest('p', { kind: 'x' as never }), 'invalid_input'],
      [() => memory.summaries.list('p', { limit: 0 }), 'invalid_input'],
      [() => memory.summaries.list('', {}), 'invalid_input'],
    ]
    for (const [call, code] of bad) await expect(call()).rejects.toMatchObject({ code })
    expect(seen).toEqual([])
    expect(await memory.summaries.list('p')).toEqual({ items: [] })
  })

  it('indexes summaries (also the one sessions.close writes) and queues synced ones with their hlc', async () => {
    const { ctx, docs, projects, sessions, summaries } = await openContext()
    await projects.create({ name: 'Synced', id: 'sy', sync: { enabled: true } })
    const s = await summaries.create('sy', { kind: 'project', text: 'mirrored' })
    const session = await sessions.create('p')
    await sessions.close(session.id, { summary: 'closing words' })
    const outbox = await ctx.db.outbox.toArray()
    expect(outbox).toEqual([expect.objectContaining({ kind: 'summaries', projectId: 'sy', id: s.id, op: 'put' })])
    expect((await readSummaryForSync(ctx, s.id))?.hlc).toBe(outbox[0]!.hlc)
    expect(docs.get(`summary:${s.id}`)).toEqual({ docId: `summary:${s.id}`, kind: 'summary', projectId: 'sy', text: 'mirrored', createdAt: s.createdAt })
    const closing = (await summaries.latest('p', { sessionId: session.id }))!
    expect(docs.get(`summary:${closing.id}`)).toMatchObject({ sessionId: session.id, text: 'closing words' })
    const stored = (await readSummaryForSync(ctx, s.id))!
    expect(() => syncedSummaries.check({ ...syncedSummaries.toRecord(stored), id: '' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })

  it('applies remote summaries last-writer-wins by hlc', async () => {
    const { ctx, docs, summaries } = await openContext()
    const local = await summaries.create('p', { kind: 'project', text: 'local' })
    const localRow = (await readSummaryForSync(ctx, local.id))!
    const batches: Change[][] = []
    ctx.feed.subscribe({}, (b) => batches.push(b))
    const apply = (row: SummaryRow) =>
      write(ctx, summaryTables(ctx), (w) => syncedSummaries.apply(ctx, w, syncedSummaries.check(syncedSummaries.toRecord(row))), { origin: 'remote' })
    const older: SummaryRow = { ...localRow, text: 'older', hlc: formatHlc(1, 0, 'zzz') }
    expect(await apply(older)).toBe(false)
    expect((await summaries.latest('p'))?.text).toBe('local')
    const newer: SummaryRow = { ...localRow, text: 'newer', hlc: formatHlc(Date.UTC(2026, 0, 1, 0, 1), 0, 'dev2') }
    expect(await apply(newer)).toBe(true)
    expect((await summaries.latest('p'))?.text).toBe('newer')
    expect(docs.get(`summary:${local.id}`)?.text).toBe('newer')
    expect(await apply(newer)).toBe(false)
    const fresh: SummaryRow = {
      id: 'remote-1',
      projectId: 'p',
      kind: 'project',
      text: 'from afar',
      createdAt: Date.UTC(2026, 0, 1, 0, 2),
      hlc: formatHlc(Date.UTC(2026, 0, 1, 0, 2), 0, 'dev2'),
    }
    expect(await apply(fresh)).toBe(true)
    expect(docs.has('summary:remote-1')).toBe(true)
    const gone: SummaryRow = { ...fresh, deletedAt: Date.UTC(2026, 0, 1, 0, 3), hlc: formatHlc(Date.UTC(2026, 0, 1, 0, 3), 0, 'dev2') }
    expect(await apply(gone)).toBe(true)
    expect(docs.has('summary:remote-1')).toBe(false)
    expect((await summaries.list('p')).items.map((s) => s.text)).toEqual(['newer'])
    expect(await readSummaryForSync(ctx, 'remote-1')).toMatchObject({ deletedAt: gone.deletedAt })
    expect(batches.flat().map((c) => [c.op, c.origin])).toEqual([
      ['put', 'remote'],
      ['put', 'remote'],
      ['delete', 'remote'],
    ])
    expect(await ctx.db.outbox.count()).toBe(0)
    await expect(apply({ ...fresh, kind: 'other' } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(apply({ ...fresh, hlc: undefined } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    // The local clock moved past the remote stamp: the next local write wins over it.
    const next = await summaries.create('p', { kind: 'project', text: 'after' })
    expect((await readSummaryForSync(ctx, next.id))!.hlc > gone.hlc).toBe(true)
  })

  it('keeps summaries across reopen', async () => {
    const { memory } = await setup()
    const s = await memory.summaries.create('p', { kind: 'project', text: 'kept' })
    await memory.close()
    await expect(memory.summaries.list('p')).rejects.toMatchObject({ code: 'closed' })
    const again = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId })
    expect(await again.summaries.latest('p')).toEqual(s)
  })
})
