import { describe, expect, it } from 'vitest'
import { openTestContext } from '../../../../test/support/core-context.js'
import { MemoryError, type Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { blockId } from './block-rules.js'
import { createBlocks } from './blocks.js'
import { syncedBlocks } from './blocks-sync.js'
import { formatHlc } from '../store/hlc.js'
import type { BlockRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import type { MirroredRecord } from '../store/synced-kind.js'
import { write } from '../store/write.js'

async function setup() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  const batches: Change[][] = []
  await memory.changes.subscribe({ kinds: ['blocks'] }, (b) => batches.push(b))
  return { memory, clock, batches, blocks: memory.blocks }
}

describe('blocks.set / get / list', () => {
  it('creates with defaults, reads back, lists by label', async () => {
    const { blocks, clock } = await setup()
    const persona = await blocks.set('p', 'persona', 'I am helpful')
    expect(persona).toEqual({ projectId: 'p', label: 'persona', value: 'I am helpful', limit: 2000, readOnly: false, updatedAt: clock.now() })
    await blocks.set('p', 'human', 'Ada', { description: 'about the user', limit: 10 })
    expect(await blocks.get('p', 'persona')).toEqual(persona)
    expect(await blocks.get('p', 'nope')).toBeUndefined()
    expect((await blocks.list('p')).map((b) => [b.label, b.limit, b.description])).toEqual([
      ['human', 10, 'about the user'],
      ['persona', 2000, undefined],
    ])
    expect(await blocks.list('user')).toEqual([])
  })

  it('replacing keeps options that are not given; an empty description clears it', async () => {
    const { blocks, clock } = await setup()
    await blocks.set('p', 'b', 'one', { limit: 50, description: 'd' })
    clock.advance(3)
    expect(await blocks.set('p', 'b', 'two')).toMatchObject({ value: 'two', limit: 50, description: 'd', readOnly: false, updatedAt: clock.now() })
    const cleared = await blocks.set('p', 'b', 'three', { description: '' })
    expect(cleared.description).toBeUndefined()
  })

  it('rejects a value over the limit (given or kept) with limit_exceeded', async () => {
    const { blocks, batches } = await setup()
    await expect(blocks.set('p', 'b', 'x'.repeat(2001))).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect(await blocks.set('p', 'b', 'x'.repeat(2000))).toMatchObject({ limit: 2000 })
    await blocks.set('p', 'small', 'abc', { limit: 5 })
    await expect(blocks.set('p', 'small', 'abcdef')).rejects.toMatchObject({ code: 'limit_exceeded' })
    await expect(blocks.set('p', 'small', 'abc', { limit: 2 })).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect(await blocks.get('p', 'small')).toMatchObject({ value: 'abc', limit: 5 })
    expect(batches).toHaveLength(2)
  })

  it('guards read-only blocks: value changes need an explicit readOnly', async () => {
    const { blocks } = await setup()
    await blocks.set('p', 'rules', 'be kind', { readOnly: true })
    await expect(blocks.set('p', 'rules', 'be rude')).rejects.toMatchObject({ code: 'read_only' })
    expect(await blocks.set('p', 'rules', 'be kind', { description: 'same value, new description' })).toMatchObject({
      readOnly: true,
      description: 'same value, new description',
    })
    expect(await blocks.set('p', 'rules', 'be very kind', { readOnly: true })).toMatchObject({ value: 'be very kind', readOnly: true })
    expect(await blocks.set('p', 'rules', 'anything', { readOnly: false })).toMatchObject({ value: 'anything', readOnly: false })
    expect(await blocks.set('p', 'rules', 'again')).toMatchObject({ value: 'again' })
  })
})

describe('blocks.append / replace', () => {
  it('appends on a new line and creates the block when missing', async () => {
    const { blocks } = await setup()
    expect(await blocks.append('p', 'notes', 'first')).toMatchObject({ value: 'first', limit: 2000, readOnly: false })
    expect((await blocks.append('p', 'notes', 'second')).value).toBe('first\nsecond')
    await blocks.set('p', 'empty', '')
    expect((await blocks.append('p', 'empty', 'x')).value).toBe('x')
  })

  it('does not add a blank line when the block already ends with a newline', async () => {
    const { blocks } = await setup()
    await blocks.set('p', 'list', '- one\n')
    expect((await blocks.append('p', 'list', '- two')).value).toBe('- one\n- two')
    await blocks.set('p', 'fit', '12345\n', { limit: 8 })
    expect((await blocks.append('p', 'fit', '67')).value).toBe('12345\n67')
  })

  it('says how much room is left and how to make more when append would exceed the limit', async () => {
    const { blocks } = await setup()
    await blocks.set('p', 'b', '12345', { limit: 8 })
    await expect(blocks.append('p', 'b', '678')).rejects.toThrow(/limit of 8.*blocks\.set/)
  })

  it('append never exceeds the limit and never touches a read-only block', async () => {
    const { blocks, batches } = await setup()
    await blocks.set('p', 'b', '12345', { limit: 8 })
    await expect(blocks.append('p', 'b', '678')).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect((await blocks.append('p', 'b', '67')).value).toBe('12345\n67')
    await blocks.set('p', 'ro', 'fixed', { readOnly: true })
    await expect(blocks.append('p', 'ro', 'more')).rejects.toMatchObject({ code: 'read_only' })
    await expect(blocks.append('p', 'new', 'y'.repeat(2001))).rejects.toMatchObject({ code: 'limit_exceeded' })
    expect(await blocks.get('p', 'new')).toBeUndefined()
    expect(await blocks.get('p', 'ro')).toMatchObject({ value: 'fixed' })
    expect(batches).toHaveLength(3)
  })

  it('replaces the first exact occurrence only', async () => {
    const { blocks } = await setup()
    await blocks.set('p', 'b', 'cat dog cat')
    expect(await blocks.replace('p', 'b', 'cat', 'bird')).toBe(true)
    expect((await blocks.get('p', 'b'))!.value).toBe('bird dog cat')
    expect(await blocks.replace('p', 'b', 'Dog', 'x')).toBe(false)
    expect(await blocks.replace('p', 'b', 'dog ', '')).toBe(true)
    expect((await blocks.get('p', 'b'))!.value).toBe('bird cat')
    expect(await blocks.replace('p', 'missing', 'a', 'b')).toBe(false)
  })

  it('replace respects the limit and read-only, and writes nothing when not found', async () => {
    const { blocks, batches } = await setup()
    await blocks.set('p', 'b', 'abc', { limit: 4 })
    await expect(blocks.replace('p', 'b', 'b', 'xyz')).rejects.toMatchObject({ code: 'limit_exceeded' })
    await blocks.set('p', 'ro', 'abc', { readOnly: true })
    await expect(blocks.replace('p', 'ro', 'a', 'b')).rejects.toMatchObject({ code: 'read_only' })
    batches.length = 0
    expect(await blocks.replace('p', 'b', 'zzz', 'y')).toBe(false)
    expect(batches).toEqual([])
    expect(await blocks.get('p', 'b')).toMatchObject({ value: 'abc' })
  })
})

describe('blocks.delete and tombstones', () => {
  it('deletes (read-only too), hides the block, and set revives the label with defaults', async () => {
    const { blocks, batches } = await setup()
    await blocks.set('p', 'b', 'text', { limit: 10, description: 'd', readOnly: true })
    expect(await blocks.delete('p', 'b')).toBe(true)
    expect(await blocks.delete('p', 'b')).toBe(false)
    expect(await blocks.delete('p', 'never')).toBe(false)
    expect(await blocks.get('p', 'b')).toBeUndefined()
    expect(await blocks.list('p')).toEqual([])
    expect(await blocks.replace('p', 'b', 'text', 'x')).toBe(false)
    expect(await blocks.set('p', 'b', 'back')).toMatchObject({ value: 'back', limit: 2000, readOnly: false })
    expect((await blocks.get('p', 'b'))!.description).toBeUndefined()
    expect(batches.map((b) => b.map((c) => c.op))).toEqual([['put'], ['delete'], ['put']])
    expect(batches[1]).toEqual([{ kind: 'blocks', op: 'delete', id: 'p/b', projectId: 'p', origin: 'local' }])
  })

  it('append after delete starts a fresh block', async () => {
    const { blocks } = await setup()
    await blocks.set('p', 'b', 'old')
    await blocks.delete('p', 'b')
    expect((await blocks.append('p', 'b', 'new')).value).toBe('new')
  })
})

describe('blocks validation and change feed', () => {
  type M = Awaited<ReturnType<typeof setup>>['blocks']
  const bad: Array<[string, string, (b: M) => Promise<unknown>]> = [
    ['empty project', 'invalid_input', (b) => b.set('', 'l', 'v')],
    ['padded label', 'invalid_input', (b) => b.set('p', 'l ', 'v')],
    ['non-string value', 'invalid_input', (b) => b.set('p', 'l', 3 as never)],
    ['limit 0', 'invalid_input', (b) => b.set('p', 'l', '', { limit: 0 })],
    ['fractional limit', 'invalid_input', (b) => b.set('p', 'l', '', { limit: 1.5 })],
    ['huge limit', 'invalid_input', (b) => b.set('p', 'l', '', { limit: 1e9 })],
    ['readOnly not boolean', 'invalid_input', (b) => b.set('p', 'l', '', { readOnly: 'yes' as never })],
    ['description not string', 'invalid_input', (b) => b.set('p', 'l', '', { description: 1 as never })],
    ['description too long', 'limit_exceeded', (b) => b.set('p', 'l', '', { description: 'd'.repeat(2001) })],
    ['options not object', 'invalid_input', (b) => b.set('p', 'l', '', 'x' as never)],
    ['unknown project', 'not_found', (b) => b.set('nope', 'l', 'v')],
    ['append empty text', 'invalid_input', (b) => b.append('p', 'l', '')],
    ['append non-string', 'invalid_input', (b) => b.append('p', 'l', null as never)],
    ['append unknown project', 'not_found', (b) => b.append('nope', 'l', 'x')],
    ['replace empty oldText', 'invalid_input', (b) => b.replace('p', 'l', '', 'x')],
    ['replace bad newText', 'invalid_input', (b) => b.replace('p', 'l', 'v', undefined as never)],
    ['replace unknown project', 'not_found', (b) => b.replace('nope', 'l', 'v', 'w')],
    ['delete bad label', 'invalid_input', (b) => b.delete('p', '')],
    ['delete unknown project', 'not_found', (b) => b.delete('nope', 'l')],
    ['get bad label', 'invalid_input', (b) => b.get('p', 7 as never)],
    ['list bad project', 'invalid_input', (b) => b.list('')],
  ]

  it.each(bad)('rejects %s with %s and writes nothing', async (_name, code, call) => {
    const { blocks, batches } = await setup()
    await blocks.set('p', 'l', 'v')
    batches.length = 0
    const error = await call(blocks).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code })
    expect(batches).toEqual([])
    expect(await blocks.list('p')).toMatchObject([{ label: 'l', value: 'v', limit: 2000 }])
  })

  it('writes to an archived project fail with not_found', async () => {
    const { memory, blocks } = await setup()
    await memory.projects.create({ name: 'Old', id: 'old' })
    await memory.projects.archive('old')
    await expect(blocks.set('old', 'l', 'v')).rejects.toMatchObject({ code: 'not_found' })
  })

  it('emits one batch per call with encoded ids; parallel appends lose nothing', async () => {
    const { blocks, batches } = await setup()
    expect(blockId('a/b', 'c d')).toBe('a%2Fb/c%20d')
    await blocks.set('p', 'a/b', 'x')
    expect(batches).toEqual([[{ kind: 'blocks', op: 'put', id: 'p/a%2Fb', projectId: 'p', origin: 'local' }]])
    await Promise.all(Array.from({ length: 10 }, (_, i) => blocks.append('p', 'log', `line ${i}`)))
    expect((await blocks.get('p', 'log'))!.value.split('\n').sort()).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i}`).sort())
    expect(batches).toHaveLength(11)
  })
})

const readBlockForSync = (ctx: StoreContext, projectId: string, label: string) => syncedBlocks.read(ctx, projectId, label)

async function openContext(deviceId = 'devA') {
  const { ctx, clock } = await openTestContext({ deviceId })
  const batches: Change[][] = []
  ctx.feed.subscribe({ kinds: ['blocks'] }, (b) => batches.push(b))
  return { ctx, clock, batches, blocks: createBlocks(ctx) }
}

describe('syncedBlocks.check + apply (last writer wins by HLC)', () => {
  const remote = (hlc: string, over: Partial<BlockRow> = {}): BlockRow => ({
    projectId: 'user',
    label: 'persona',
    value: 'remote',
    limit: 100,
    readOnly: false,
    updatedAt: 5,
    hlc,
    ...over,
  })
  const record = (row: BlockRow): MirroredRecord => ({
    kind: 'blocks',
    projectId: row.projectId,
    id: row.label,
    hlc: row.hlc,
    row: { ...row } as MirroredRecord['row'],
  })
  const apply = (ctx: StoreContext, row: BlockRow) =>
    write(ctx, ['blocks'], (w) => syncedBlocks.apply(ctx, w, syncedBlocks.check(record(row))), { origin: 'remote' })

  it('applies a newer state, ignores older or equal stamps, and records a remote change', async () => {
    const { ctx, clock, batches, blocks } = await openContext()
    const local = await blocks.set('user', 'persona', 'local')
    const localHlc = (await readBlockForSync(ctx, 'user', 'persona'))!.hlc
    expect(await apply(ctx, remote(formatHlc(clock.now() - 1, 0, 'devB')))).toBe(false)
    expect(await apply(ctx, remote(localHlc))).toBe(false)
    expect(await blocks.get('user', 'persona')).toEqual(local)
    const newer = formatHlc(clock.now() + 1000, 0, 'devB')
    expect(await apply(ctx, remote(newer, { description: 'from B' }))).toBe(true)
    expect(await blocks.get('user', 'persona')).toEqual({
      projectId: 'user',
      label: 'persona',
      value: 'remote',
      limit: 100,
      readOnly: false,
      updatedAt: 5,
      description: 'from B',
    })
    expect(await readBlockForSync(ctx, 'user', 'persona')).toMatchObject({ hlc: newer })
    expect(batches.at(-1)).toEqual([{ kind: 'blocks', op: 'put', id: 'user/persona', projectId: 'user', origin: 'remote' }])
    // the clock learned the remote stamp: the next local write wins over it
    await blocks.set('user', 'persona', 'mine again')
    expect((await readBlockForSync(ctx, 'user', 'persona'))!.hlc > newer).toBe(true)
  })

  it('replicates tombstones both ways: a later delete wins, a later put revives', async () => {
    const { ctx, clock, batches, blocks } = await openContext()
    await blocks.set('user', 'persona', 'local')
    const del = formatHlc(clock.now() + 10, 0, 'devB')
    expect(await apply(ctx, remote(del, { value: '', deletedAt: 6 }))).toBe(true)
    expect(await blocks.get('user', 'persona')).toBeUndefined()
    expect(await readBlockForSync(ctx, 'user', 'persona')).toMatchObject({ deletedAt: 6, hlc: del })
    expect(batches.at(-1)![0]).toMatchObject({ op: 'delete', origin: 'remote' })
    expect(await apply(ctx, remote(formatHlc(clock.now() + 5, 0, 'devB')))).toBe(false)
    expect(await apply(ctx, remote(formatHlc(clock.now() + 20, 0, 'devC'), { value: 'revived' }))).toBe(true)
    expect((await blocks.get('user', 'persona'))!.value).toBe('revived')
  })

  it('ties on time and counter break by device id, and malformed input writes nothing', async () => {
    const { ctx, clock, blocks } = await openContext()
    const t = clock.now() + 100
    expect(await apply(ctx, remote(formatHlc(t, 0, 'devB')))).toBe(true)
    expect(await apply(ctx, remote(formatHlc(t, 0, 'devA'), { value: 'lower device' }))).toBe(false)
    expect(await apply(ctx, remote(formatHlc(t, 0, 'devC'), { value: 'higher device' }))).toBe(true)
    await expect(apply(ctx, remote(formatHlc(t + 1, 0, 'devC'), { readOnly: 'no' as never }))).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(apply(ctx, remote('', {}))).rejects.toMatchObject({ code: 'invalid_input' })
    expect((await blocks.get('user', 'persona'))!.value).toBe('higher device')
    expect(await readBlockForSync(ctx, 'user', 'none')).toBeUndefined()
  })
})
