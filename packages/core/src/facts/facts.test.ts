import { describe, expect, it } from 'vitest'
import { MemoryError, type Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { factId } from './facts.js'

async function setup() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  const batches: Change[][] = []
  await memory.changes.subscribe({ kinds: ['facts'] }, (b) => batches.push(b))
  return { memory, clock, batches }
}

describe('facts.set / get', () => {
  it('creates a fact with defaults and reads it back', async () => {
    const { memory, clock } = await setup()
    const fact = await memory.facts.set('p', 'name', 'Ada')
    expect(fact).toEqual({
      id: 'p/name',
      projectId: 'p',
      key: 'name',
      value: 'Ada',
      confidence: 1,
      tags: [],
      createdAt: clock.now(),
      updatedAt: clock.now(),
      version: 1,
    })
    expect(await memory.facts.get('p', 'name')).toEqual(fact)
    expect(await memory.facts.get('p', 'missing')).toBeUndefined()
    expect(await memory.facts.get('user', 'name')).toBeUndefined()
  })

  it('keeps confidence, source and tags (deduplicated, sorted)', async () => {
    const { memory } = await setup()
    const fact = await memory.facts.set(
      'p',
      'city',
      { name: 'Rome', since: 2020 },
      {
        confidence: 0.25,
        source: { sessionId: 's1', messageId: 'm1', tool: 'extract', note: 'said so', ...{ extra: undefined } } as never,
        tags: ['travel', 'home', 'travel'],
      },
    )
    expect(fact).toMatchObject({
      value: { name: 'Rome', since: 2020 },
      confidence: 0.25,
      tags: ['home', 'travel'],
      source: { sessionId: 's1', messageId: 'm1', tool: 'extract', note: 'said so' },
    })
    expect(await memory.facts.get('p', 'city')).toEqual(fact)
    expect((await memory.facts.set('p', 'x', 1, { source: { sessionId: undefined } })).source).toBeUndefined()
  })

  it('upserts: bumps the version, keeps createdAt, replaces value, tags and source', async () => {
    const { memory, clock } = await setup()
    const first = await memory.facts.set('p', 'k', 1, { tags: ['a'], source: { tool: 't' } })
    clock.advance(10)
    const second = await memory.facts.set('p', 'k', 2)
    expect(second).toMatchObject({ value: 2, version: 2, createdAt: first.createdAt, updatedAt: first.createdAt + 10, tags: [] })
    expect(second.source).toBeUndefined()
  })

  it('accepts every JSON kind and edge confidence values', async () => {
    const { memory } = await setup()
    for (const [i, value] of [null, true, 0, -1.5, '', [], {}, [1, { a: [null] }]].entries()) {
      expect((await memory.facts.set('p', `k${i}`, value as never, { confidence: i % 2 })).value).toEqual(value)
    }
  })

  it('stores a copy: mutating the input afterwards changes nothing', async () => {
    const { memory } = await setup()
    const value = { list: [1] }
    await memory.facts.set('p', 'k', value)
    value.list.push(2)
    expect((await memory.facts.get('p', 'k'))!.value).toEqual({ list: [1] })
  })

  it('derives the id from project and key', async () => {
    const { memory } = await setup()
    expect(factId('a/b', 'c d')).toBe('a%2Fb/c%20d')
    expect((await memory.facts.set('p', 'x/y', 1)).id).toBe('p/x%2Fy')
  })
})

describe('facts input validation', () => {
  const big = 'x'.repeat(1024 * 1024)
  class Thing {
    a = 1
  }
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  const bad: Array<[string, string, (m: Awaited<ReturnType<typeof setup>>['memory']) => Promise<unknown>]> = [
    ['empty project id', 'invalid_input', (m) => m.facts.set('', 'k', 1)],
    ['padded key', 'invalid_input', (m) => m.facts.set('p', ' k', 1)],
    ['non-string key', 'invalid_input', (m) => m.facts.set('p', 3 as never, 1)],
    ['undefined value', 'invalid_input', (m) => m.facts.set('p', 'k', undefined as never)],
    ['function value', 'invalid_input', (m) => m.facts.set('p', 'k', (() => 1) as never)],
    ['NaN in value', 'invalid_input', (m) => m.facts.set('p', 'k', { n: Number.NaN } as never)],
    ['class instance', 'invalid_input', (m) => m.facts.set('p', 'k', new Thing() as never)],
    ['Date value', 'invalid_input', (m) => m.facts.set('p', 'k', new Date() as never)],
    ['cycle', 'invalid_input', (m) => m.facts.set('p', 'k', cyclic as never)],
    ['value over 1 MiB', 'limit_exceeded', (m) => m.facts.set('p', 'k', big)],
    ['confidence > 1', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { confidence: 1.01 })],
    ['confidence < 0', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { confidence: -0.1 })],
    ['confidence NaN', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { confidence: Number.NaN })],
    ['confidence string', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { confidence: '1' as never })],
    ['source not object', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { source: 'chat' as never })],
    ['source unknown field', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { source: { url: 'x' } as never })],
    ['source empty session', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { source: { sessionId: '' } })],
    ['source long note', 'limit_exceeded', (m) => m.facts.set('p', 'k', 1, { source: { note: 'n'.repeat(2001) } })],
    ['tags not array', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { tags: 'a' as never })],
    ['empty tag', 'invalid_input', (m) => m.facts.set('p', 'k', 1, { tags: ['a', ''] })],
    ['options not object', 'invalid_input', (m) => m.facts.set('p', 'k', 1, 5 as never)],
    ['unknown project', 'not_found', (m) => m.facts.set('nope', 'k', 1)],
    ['list bad limit', 'invalid_input', (m) => m.facts.list('p', { limit: 0 })],
    ['list unknown offset', 'invalid_input', (m) => m.facts.list('p', { offset: 1 } as never)],
    ['list bad after', 'invalid_input', (m) => m.facts.list('p', { after: 3 as never })],
    ['list empty after', 'invalid_input', (m) => m.facts.list('p', { after: '' })],
    ['list limit over max', 'invalid_input', (m) => m.facts.list('p', { limit: 10_001 })],
    ['deleted bad after', 'invalid_input', (m) => m.facts.deleted('p', { after: 'not a cursor' })],
    ['list bad tag', 'invalid_input', (m) => m.facts.list('p', { tag: '' })],
    ['list bad prefix', 'invalid_input', (m) => m.facts.list('p', { prefix: 1 as never })],
    ['get bad key', 'invalid_input', (m) => m.facts.get('p', '')],
    ['delete unknown project', 'not_found', (m) => m.facts.delete('nope', 'k')],
    ['deleteAll bad tag', 'invalid_input', (m) => m.facts.deleteAll('p', { tag: ' t' })],
    ['restore unknown project', 'not_found', (m) => m.facts.restore('nope', 'k')],
    ['purge bad key', 'invalid_input', (m) => m.facts.purge('p', '')],
    ['purge unknown project', 'not_found', (m) => m.facts.purge('nope')],
    ['history bad key', 'invalid_input', (m) => m.facts.history('p', '')],
    ['at bad time', 'invalid_input', (m) => m.facts.at('p', 'k', -1)],
    ['at non-integer time', 'invalid_input', (m) => m.facts.at('p', 'k', 1.5)],
  ]

  it.each(bad)('rejects %s with %s and writes nothing', async (_name, code, call) => {
    const { memory, batches } = await setup()
    await memory.facts.set('p', 'k', 'before', { tags: ['t'] })
    batches.length = 0
    const error = await call(memory).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code })
    expect(batches).toEqual([])
    expect(await memory.facts.get('p', 'k')).toMatchObject({ value: 'before', version: 1 })
    expect(await memory.facts.history('p', 'k')).toHaveLength(1)
  })

  it('rejects writes to an archived project', async () => {
    const { memory, batches } = await setup()
    await memory.projects.create({ name: 'Old', id: 'old' })
    await memory.facts.set('old', 'k', 1)
    await memory.projects.archive('old')
    batches.length = 0
    await expect(memory.facts.set('old', 'k', 2)).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.facts.delete('old', 'k')).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.facts.deleteAll('old')).rejects.toMatchObject({ code: 'not_found' })
    expect(batches).toEqual([])
    expect(await memory.facts.get('old', 'k')).toMatchObject({ value: 1 })
  })

  it('fails with closed after close()', async () => {
    const { memory } = await setup()
    await memory.close()
    await expect(memory.facts.set('p', 'k', 1)).rejects.toMatchObject({ code: 'closed' })
    await expect(memory.facts.get('p', 'k')).rejects.toMatchObject({ code: 'closed' })
  })
})

describe('facts.list', () => {
  it('lists active facts by key with prefix, tag and paging', async () => {
    const { memory } = await setup()
    for (const key of ['b.2', 'a', 'b.1', 'c', 'b.3', 'b']) await memory.facts.set('p', key, key, { tags: key.startsWith('b') ? ['bee'] : [] })
    await memory.facts.set('user', 'a.user', 1, { tags: ['bee'] })
    await memory.facts.delete('p', 'b.2')
    const keys = async (o?: Parameters<typeof memory.facts.list>[1]) => (await memory.facts.list('p', o)).items.map((f) => f.key)
    expect(await keys()).toEqual(['a', 'b', 'b.1', 'b.3', 'c'])
    expect(await keys({ prefix: 'b.' })).toEqual(['b.1', 'b.3'])
    expect(await keys({ prefix: '' })).toEqual(['a', 'b', 'b.1', 'b.3', 'c'])
    expect(await keys({ prefix: 'zz' })).toEqual([])
    expect(await keys({ tag: 'bee' })).toEqual(['b', 'b.1', 'b.3'])
    expect(await keys({ tag: 'bee', prefix: 'b.' })).toEqual(['b.1', 'b.3'])
    expect(await keys({ tag: 'none' })).toEqual([])
    const first = await memory.facts.list('p', { limit: 2 })
    expect(first).toEqual({ items: [expect.objectContaining({ key: 'a' }), expect.objectContaining({ key: 'b' })], next: 'b' })
    const second = await memory.facts.list('p', { limit: 2, after: first.next })
    expect(second.items.map((f) => f.key)).toEqual(['b.1', 'b.3'])
    expect(second.next).toBe('b.3')
    const last = await memory.facts.list('p', { limit: 2, after: second.next })
    expect(last.items.map((f) => f.key)).toEqual(['c'])
    expect(last).not.toHaveProperty('next')
    expect(await keys({ after: 'b.1' })).toEqual(['b.3', 'c'])
    expect(await keys({ tag: 'bee', limit: 1, after: 'b' })).toEqual(['b.1'])
    expect(await keys({ prefix: 'b.', after: 'b.1' })).toEqual(['b.3'])
    expect(await keys({ prefix: 'b.', after: 'a' })).toEqual(['b.1', 'b.3'])
    expect(await memory.facts.list('nope')).toEqual({ items: [] })
  })

  // With only an injected factory (Node) Dexie's maxKey is the string '\uffff'; ranges end at keys.ts maxKey() instead.
  it('lists and deletes keys that start with the highest code unit, also with an injected factory', async () => {
    const { memory } = await setup()
    await memory.facts.set('p', '\uffffa', 1)
    await memory.facts.set('p', 'b', 2)
    expect((await memory.facts.list('p')).items.map((f) => f.key)).toEqual(['b', '\uffffa'])
    expect(await memory.facts.deleteAll('p')).toBe(2)
  })

  it('handles prefixes ending in the highest code unit', async () => {
    const { memory } = await setup()
    await memory.facts.set('p', 'a\uffff', 1)
    await memory.facts.set('p', 'a\uffffb', 2)
    await memory.facts.set('p', 'b', 3)
    expect((await memory.facts.list('p', { prefix: 'a\uffff' })).items.map((f) => f.value)).toEqual([1, 2])
  })
})

describe('facts soft delete, restore, purge', () => {
  it('soft-deletes: hidden from get and list, listed in deleted() newest first', async () => {
    const { memory, clock } = await setup()
    await memory.facts.set('p', 'a', 1)
    await memory.facts.set('p', 'b', 2)
    await memory.facts.set('p', 'c', 3)
    clock.advance(1)
    expect(await memory.facts.delete('p', 'b')).toBe(true)
    clock.advance(1)
    expect(await memory.facts.delete('p', 'a')).toBe(true)
    expect(await memory.facts.delete('p', 'a')).toBe(false)
    expect(await memory.facts.delete('p', 'zz')).toBe(false)
    expect(await memory.facts.get('p', 'a')).toBeUndefined()
    expect((await memory.facts.list('p')).items.map((f) => f.key)).toEqual(['c'])
    const { items: deleted } = await memory.facts.deleted('p')
    expect(deleted.map((f) => [f.key, f.deletedAt, f.version])).toEqual([
      ['a', clock.now(), 2],
      ['b', clock.now() - 1, 2],
    ])
    expect(deleted[0]).toMatchObject({ value: 1, updatedAt: clock.now() })
    expect(await memory.facts.deleted('user')).toEqual({ items: [] })
  })

  it('restores a deleted fact as a new version; undefined when nothing to restore', async () => {
    const { memory, clock } = await setup()
    await memory.facts.set('p', 'k', 'v', { tags: ['t'], confidence: 0.5 })
    await memory.facts.delete('p', 'k')
    clock.advance(5)
    const restored = await memory.facts.restore('p', 'k')
    expect(restored).toMatchObject({ value: 'v', tags: ['t'], confidence: 0.5, version: 3, updatedAt: clock.now() })
    expect(restored!.deletedAt).toBeUndefined()
    expect(await memory.facts.get('p', 'k')).toEqual(restored)
    expect(await memory.facts.restore('p', 'k')).toBeUndefined()
    expect(await memory.facts.restore('p', 'missing')).toBeUndefined()
    expect(await memory.facts.deleted('p')).toEqual({ items: [] })
  })

  it('set on a soft-deleted key restores it with the new value', async () => {
    const { memory } = await setup()
    const first = await memory.facts.set('p', 'k', 1)
    await memory.facts.delete('p', 'k')
    const again = await memory.facts.set('p', 'k', 2)
    expect(again).toMatchObject({ value: 2, version: 3, createdAt: first.createdAt })
    expect(again.deletedAt).toBeUndefined()
    expect(await memory.facts.deleted('p')).toEqual({ items: [] })
  })

  it('deleteAll soft-deletes all or by tag in one batch and counts', async () => {
    const { memory, batches } = await setup()
    await memory.facts.set('p', 'a', 1, { tags: ['x'] })
    await memory.facts.set('p', 'b', 2, { tags: ['x', 'y'] })
    await memory.facts.set('p', 'c', 3)
    await memory.facts.set('user', 'd', 4, { tags: ['x'] })
    batches.length = 0
    expect(await memory.facts.deleteAll('p', { tag: 'x' })).toBe(2)
    expect(batches).toHaveLength(1)
    expect(batches[0]!.map((c) => [c.op, c.id])).toEqual([
      ['delete', 'p/a'],
      ['delete', 'p/b'],
    ])
    expect(await memory.facts.deleteAll('p', { tag: 'x' })).toBe(0)
    expect(batches).toHaveLength(1)
    expect(await memory.facts.get('user', 'd')).toMatchObject({ value: 4 })
    expect(await memory.facts.deleteAll('p')).toBe(1)
    expect(await memory.facts.list('p')).toEqual({ items: [] })
    expect((await memory.facts.deleted('p')).items.map((f) => f.key).sort()).toEqual(['a', 'b', 'c'])
  })

  it('purge(key) removes the fact and its history whatever its state', async () => {
    const { memory, batches } = await setup()
    await memory.facts.set('p', 'k', 1)
    await memory.facts.set('p', 'k', 2)
    batches.length = 0
    expect(await memory.facts.purge('p', 'k')).toBe(1)
    expect(batches).toEqual([[{ kind: 'facts', op: 'delete', id: 'p/k', projectId: 'p', origin: 'local' }]])
    expect(await memory.facts.get('p', 'k')).toBeUndefined()
    expect(await memory.facts.history('p', 'k')).toEqual([])
    expect(await memory.facts.purge('p', 'k')).toBe(0)
    expect((await memory.facts.set('p', 'k', 3)).version).toBe(1)
  })

  it('purge() removes every soft-deleted fact of the project only', async () => {
    const { memory } = await setup()
    await memory.facts.set('p', 'a', 1)
    await memory.facts.set('p', 'b', 2)
    await memory.facts.set('p', 'c', 3)
    await memory.facts.set('user', 'a', 9)
    await memory.facts.delete('user', 'a')
    await memory.facts.delete('p', 'a')
    await memory.facts.delete('p', 'b')
    expect(await memory.facts.purge('p')).toBe(2)
    expect(await memory.facts.deleted('p')).toEqual({ items: [] })
    expect(await memory.facts.history('p', 'a')).toEqual([])
    expect((await memory.facts.list('p')).items.map((f) => f.key)).toEqual(['c'])
    expect(await memory.facts.history('p', 'c')).toHaveLength(1)
    expect((await memory.facts.deleted('user')).items).toHaveLength(1)
    expect(await memory.facts.purge('p')).toBe(0)
  })
})

describe('facts history and at()', () => {
  it('keeps every version with validFrom/validTo and answers at(time)', async () => {
    const { memory, clock } = await setup()
    const t0 = clock.now()
    await memory.facts.set('p', 'city', 'Paris', { source: { sessionId: 's1' }, confidence: 0.9 })
    clock.advance(100)
    await memory.facts.set('p', 'city', 'Rome')
    clock.advance(100)
    await memory.facts.delete('p', 'city')
    clock.advance(100)
    await memory.facts.restore('p', 'city')
    expect(await memory.facts.history('p', 'city')).toEqual([
      { key: 'city', value: 'Paris', version: 1, validFrom: t0, validTo: t0 + 100, deleted: false, source: { sessionId: 's1' }, confidence: 0.9 },
      { key: 'city', value: 'Rome', version: 2, validFrom: t0 + 100, validTo: t0 + 200, deleted: false, confidence: 1 },
      { key: 'city', value: 'Rome', version: 3, validFrom: t0 + 200, validTo: t0 + 300, deleted: true, confidence: 1 },
      { key: 'city', value: 'Rome', version: 4, validFrom: t0 + 300, deleted: false, confidence: 1 },
    ])
    expect(await memory.facts.at('p', 'city', t0 - 1)).toBeUndefined()
    expect(await memory.facts.at('p', 'city', t0)).toBe('Paris')
    expect(await memory.facts.at('p', 'city', t0 + 99)).toBe('Paris')
    expect(await memory.facts.at('p', 'city', t0 + 100)).toBe('Rome')
    expect(await memory.facts.at('p', 'city', t0 + 250)).toBeUndefined()
    expect(await memory.facts.at('p', 'city', t0 + 300)).toBe('Rome')
    expect(await memory.facts.at('p', 'city', t0 + 10_000)).toBe('Rome')
    expect(await memory.facts.at('p', 'other', t0)).toBeUndefined()
    expect(await memory.facts.history('p', 'other')).toEqual([])
  })

  it('replaces keys another connection rewrote or purged since this one last wrote them', async () => {
    const { memory: a, clock } = await setup()
    const b = await openTestMemory({ indexedDB: a.indexedDB, userId: a.userId, now: clock.now })
    const t0 = clock.now()
    await a.facts.set('p', 'city', 'Paris')
    clock.advance(10)
    await b.facts.set('p', 'city', 'Rome')
    await b.facts.purge('p', 'city')
    clock.advance(10)
    // `a` wrote the key before; it is gone now: it starts over at version 1.
    expect(await a.facts.set('p', 'city', 'Oslo')).toMatchObject({ version: 1, createdAt: t0 + 20 })
    clock.advance(10)
    await b.facts.set('p', 'city', 'Lima')
    clock.advance(10)
    expect(await a.facts.set('p', 'city', 'Kyiv')).toMatchObject({ version: 3, createdAt: t0 + 20, updatedAt: t0 + 40 })
    expect((await a.facts.history('p', 'city')).map((v) => [v.value, v.version, v.validFrom, v.validTo])).toEqual([
      ['Oslo', 1, t0 + 20, t0 + 30],
      ['Lima', 2, t0 + 30, t0 + 40],
      ['Kyiv', 3, t0 + 40, undefined],
    ])
    a.close()
    b.close()
    const c = await openTestMemory({ indexedDB: a.indexedDB, userId: a.userId, now: clock.now })
    for (const word of ['Paris', 'Rome', 'Oslo', 'Lima']) expect(await c.search('p', word, { mode: 'text' }), word).toEqual([])
    expect((await c.search('p', 'Kyiv', { mode: 'text' })).map((h) => [h.kind, h.text])).toEqual([['fact', 'city: Kyiv']])
    c.close()
  })

  it('picks the newest of several versions written in the same millisecond', async () => {
    const { memory, clock } = await setup()
    await memory.facts.set('p', 'k', 1)
    await memory.facts.set('p', 'k', 2)
    await memory.facts.set('p', 'k', 3)
    expect(await memory.facts.at('p', 'k', clock.now())).toBe(3)
    expect((await memory.facts.history('p', 'k')).map((v) => v.version)).toEqual([1, 2, 3])
  })
})

describe('facts concurrency and change feed', () => {
  it('parallel sets of one key make versions 1..N with no lost update', async () => {
    const { memory } = await setup()
    const n = 25
    const results = await Promise.all(Array.from({ length: n }, (_, i) => memory.facts.set('p', 'k', i)))
    expect(results.map((f) => f.version).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1))
    const history = await memory.facts.history('p', 'k')
    expect(history.map((v) => v.version)).toEqual(Array.from({ length: n }, (_, i) => i + 1))
    expect(new Set(history.map((v) => v.value)).size).toBe(n)
    const last = results.find((f) => f.version === n)!
    expect((await memory.facts.get('p', 'k'))!.value).toBe(last.value)
  })

  it('parallel sets of different keys all land', async () => {
    const { memory } = await setup()
    await Promise.all(Array.from({ length: 20 }, (_, i) => memory.facts.set('p', `k${String(i).padStart(2, '0')}`, i)))
    expect((await memory.facts.list('p')).items).toHaveLength(20)
  })

  it('emits one batch per committed call with the fact id and origin', async () => {
    const { memory, batches } = await setup()
    await memory.facts.set('p', 'k', 1)
    await memory.facts.delete('p', 'k')
    await memory.facts.restore('p', 'k')
    await memory.facts.delete('p', 'missing')
    await memory.facts.restore('p', 'k')
    const change = (op: 'put' | 'delete') => [{ kind: 'facts', op, id: 'p/k', projectId: 'p', origin: 'local' }]
    expect(batches).toEqual([change('put'), change('delete'), change('put')])
  })
})
