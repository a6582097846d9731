import { describe, expect, it } from 'vitest'
import { openTestContext } from '../../../../test/support/core-context.js'
import type { Change } from '@engram/core'
import { createFactEdits } from './fact-edits.js'
import { createFacts } from './facts.js'
import { factId, factTables } from './facts-rows.js'
import { syncedFacts } from './facts-sync.js'
import { formatHlc } from '../store/hlc.js'
import type { StoreContext } from '../store/store-context.js'
import type { Source } from '../store/rows.js'
import type { MirroredRecord } from '../store/synced-kind.js'
import type { Json } from '../store/validate.js'
import { write } from '../store/write.js'

async function openContext() {
  const { ctx, clock, docs } = await openTestContext()
  const batches: Change[][] = []
  ctx.feed.subscribe({ kinds: ['facts'] }, (b) => batches.push(b))
  return { ctx, clock, docs, batches, facts: { ...createFacts(ctx), ...createFactEdits(ctx) } }
}

/** A fact state as another device sends it (the travelling fields of its row). */
interface RemoteFact {
  projectId: string
  key: string
  value: Json
  confidence: number
  tags: string[]
  createdAt: number
  updatedAt: number
  hlc: string
  deletedAt?: number
  source?: Source
}

const remote = (hlc: string, over: Partial<RemoteFact> = {}): RemoteFact => ({
  projectId: 'user',
  key: 'city',
  value: 'Oslo',
  confidence: 0.8,
  tags: ['geo'],
  createdAt: 1,
  updatedAt: Date.UTC(2026, 0, 2),
  hlc,
  ...over,
})
const record = (r: RemoteFact): MirroredRecord => ({
  kind: 'facts',
  projectId: r.projectId,
  id: factId(r.projectId, r.key),
  hlc: r.hlc,
  row: { ...r } as unknown as MirroredRecord['row'],
})
const apply = (ctx: StoreContext, r: RemoteFact) =>
  write(ctx, factTables(ctx), (w) => syncedFacts.apply(ctx, w, syncedFacts.check(record(r))), { origin: 'remote' })
const readFactForSync = (ctx: StoreContext, projectId: string, key: string) => syncedFacts.read(ctx, projectId, factId(projectId, key))

describe('facts search index', () => {
  it('indexes on set/restore and removes on delete/purge', async () => {
    const { facts, docs, clock } = await openContext()
    await facts.set('user', 'city', 'Rome')
    await facts.set('user', 'pets', { dogs: 2 })
    expect(docs.get('fact:user/city')).toEqual({ docId: 'fact:user/city', kind: 'fact', projectId: 'user', text: 'city: Rome', createdAt: clock.now() })
    expect(docs.get('fact:user/pets')!.text).toBe('pets: {"dogs":2}')
    await facts.delete('user', 'city')
    expect(docs.has('fact:user/city')).toBe(false)
    await facts.restore('user', 'city')
    expect(docs.has('fact:user/city')).toBe(true)
    await facts.deleteAll('user')
    expect(docs.size).toBe(0)
    await facts.set('user', 'city', 'Paris')
    await facts.purge('user', 'city')
    expect(docs.size).toBe(0)
  })
})

describe('outbox', () => {
  it('local writes of synced projects are queued; remote applies and other projects are not', async () => {
    const { ctx, clock, facts } = await openContext()
    await facts.set('user', 'a', 1)
    expect(await ctx.db.outbox.count()).toBe(0)
    ctx.syncedProjects.add('user')
    await facts.set('user', 'a', 2)
    await facts.delete('user', 'a')
    expect((await ctx.db.outbox.toArray()).map((r) => [r.kind, r.op, r.id])).toEqual([
      ['facts', 'put', 'user/a'],
      ['facts', 'delete', 'user/a'],
    ])
    expect(await apply(ctx, remote(formatHlc(clock.now() + 10, 0, 'devB')))).toBe(true)
    expect(await ctx.db.outbox.count()).toBe(2)
  })
})

describe('syncedFacts.check + apply (last writer wins by HLC)', () => {
  it('applies on a never-seen key, as version 1 with origin remote', async () => {
    const { ctx, clock, facts, docs, batches } = await openContext()
    const hlc = formatHlc(clock.now(), 3, 'devB')
    expect(await apply(ctx, remote(hlc))).toBe(true)
    expect(await facts.get('user', 'city')).toEqual({
      id: 'user/city',
      projectId: 'user',
      key: 'city',
      value: 'Oslo',
      confidence: 0.8,
      tags: ['geo'],
      createdAt: 1,
      updatedAt: Date.UTC(2026, 0, 2),
      version: 1,
    })
    expect(await readFactForSync(ctx, 'user', 'city')).toMatchObject({ hlc, tagKeys: ['user\u0001geo'] })
    expect((await ctx.db.factVersions.toArray()).map((v) => [v.version, v.origin, v.hlc])).toEqual([[1, 'remote', hlc]])
    expect(docs.get('fact:user/city')!.text).toBe('city: Oslo')
    expect(batches).toEqual([[{ kind: 'facts', op: 'put', id: 'user/city', projectId: 'user', origin: 'remote' }]])
    expect((await facts.list('user', { tag: 'geo' })).items.map((f) => f.key)).toEqual(['city'])
  })

  it('keeps the newer local state against an older or equal remote stamp', async () => {
    const { ctx, clock, facts, batches } = await openContext()
    const local = await facts.set('user', 'city', 'Rome')
    const stored = (await readFactForSync(ctx, 'user', 'city'))!
    batches.length = 0
    expect(await apply(ctx, remote(formatHlc(clock.now() - 1, 9, 'devZ')))).toBe(false)
    expect(await apply(ctx, remote(stored.hlc))).toBe(false)
    expect(await apply(ctx, remote(formatHlc(clock.now(), 0, 'dev0')))).toBe(false)
    expect(await facts.get('user', 'city')).toEqual(local)
    expect(await facts.history('user', 'city')).toHaveLength(1)
    expect(batches).toEqual([])
  })

  it('a newer remote state becomes the next version and closes the previous one at its updatedAt', async () => {
    const { ctx, clock, facts } = await openContext()
    const t0 = clock.now()
    await facts.set('user', 'city', 'Rome')
    const later = t0 + 500
    expect(await apply(ctx, remote(formatHlc(later, 0, 'devB'), { updatedAt: later }))).toBe(true)
    expect(await facts.history('user', 'city')).toEqual([
      { key: 'city', value: 'Rome', version: 1, validFrom: t0, validTo: later, deleted: false, confidence: 1 },
      { key: 'city', value: 'Oslo', version: 2, validFrom: later, deleted: false, confidence: 0.8 },
    ])
    expect(await facts.at('user', 'city', later - 1)).toBe('Rome')
    expect(await facts.at('user', 'city', later)).toBe('Oslo')
    expect((await facts.get('user', 'city'))!.version).toBe(2)
  })

  it('tombstones follow the same rule: a later delete wins, a later put restores', async () => {
    const { ctx, clock, facts, docs, batches } = await openContext()
    await facts.set('user', 'city', 'Rome')
    const t = clock.now()
    expect(await apply(ctx, remote(formatHlc(t + 10, 0, 'devB'), { value: 'Rome', deletedAt: t + 10, updatedAt: t + 10 }))).toBe(true)
    expect(await facts.get('user', 'city')).toBeUndefined()
    expect((await facts.deleted('user')).items.map((f) => f.deletedAt)).toEqual([t + 10])
    expect(docs.has('fact:user/city')).toBe(false)
    expect(batches.at(-1)).toEqual([{ kind: 'facts', op: 'delete', id: 'user/city', projectId: 'user', origin: 'remote' }])
    expect(await apply(ctx, remote(formatHlc(t + 5, 0, 'devC'), { value: 'stale' }))).toBe(false)
    expect(await apply(ctx, remote(formatHlc(t + 20, 0, 'devC'), { value: 'Bergen', updatedAt: t + 20 }))).toBe(true)
    expect((await facts.get('user', 'city'))!.value).toBe('Bergen')
    expect((await facts.history('user', 'city')).map((v) => [v.version, v.deleted])).toEqual([
      [1, false],
      [2, true],
      [3, false],
    ])
  })

  it('the clock learns the remote stamp, so the next local write beats it', async () => {
    const { ctx, clock, facts } = await openContext()
    const future = formatHlc(clock.now() + 60_000, 7, 'devB')
    expect(await apply(ctx, remote(future))).toBe(true)
    await facts.set('user', 'city', 'local again')
    expect((await readFactForSync(ctx, 'user', 'city'))!.hlc > future).toBe(true)
  })

  it('rejects a malformed remote fact before writing anything', async () => {
    const { ctx, clock, facts, batches } = await openContext()
    const hlc = formatHlc(clock.now() + 1, 0, 'devB')
    for (const bad of [
      remote(hlc, { key: '' }),
      remote(hlc, { confidence: 2 }),
      remote(hlc, { value: undefined as never }),
      remote(hlc, { tags: 'x' as never }),
      remote('', {}),
      remote(hlc, { source: { foo: 'x' } as never }),
      remote(hlc, { updatedAt: -1 }),
    ]) {
      await expect(apply(ctx, bad)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    expect(await facts.history('user', 'city')).toEqual([])
    expect(batches).toEqual([])
  })

  it('after purge the key is gone for sync and any remote state is taken', async () => {
    const { ctx, clock, facts } = await openContext()
    await facts.set('user', 'city', 'Rome')
    await facts.purge('user', 'city')
    expect(await readFactForSync(ctx, 'user', 'city')).toBeUndefined()
    expect(await apply(ctx, remote(formatHlc(clock.now() - 1000, 0, 'devB')))).toBe(true)
    expect((await facts.get('user', 'city'))!.version).toBe(1)
  })
})
