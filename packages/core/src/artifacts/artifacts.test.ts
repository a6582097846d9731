import { describe, expect, it } from 'vitest'
import { artifactsModule, createMemory, type Change } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const HELLO_SHA = '185f8db32271fe25f561a6fc938b2e264306ec304eda518007d1764826381969'

async function setup(options: { maxArtifactBytes?: number } = {}) {
  const clock = testClock(Date.UTC(2026, 5, 1))
  const memory = await openTestMemory({ now: clock.now, ...options })
  await memory.projects.create({ id: 'p', name: 'P' })
  return { clock, memory }
}

describe('artifacts', () => {
  it('puts a string or a Blob, gets it back as a Blob with its metadata', async () => {
    const { clock, memory } = await setup()
    const text = await memory.artifacts.put('p', { name: 'hello.txt', mimeType: 'text/plain', data: 'Hello', runId: 'run-1', meta: { lang: 'en' } })
    expect(text).toEqual({
      id: expect.any(String),
      projectId: 'p',
      name: 'hello.txt',
      mimeType: 'text/plain',
      size: 5,
      sha256: HELLO_SHA,
      runId: 'run-1',
      meta: { lang: 'en' },
      createdAt: clock.now(),
      onDevice: true,
    })
    const got = await memory.artifacts.get(text.id)
    expect(got?.data).toBeInstanceOf(Blob)
    expect(await got!.data!.text()).toBe('Hello')
    expect(got!.data!.type).toBe('text/plain')
    const bytes = new Uint8Array([0, 1, 2, 255])
    const bin = await memory.artifacts.put('p', { name: 'b.bin', mimeType: 'application/octet-stream', data: new Blob([bytes], { type: 'x/other' }) })
    const back = await memory.artifacts.get(bin.id)
    expect(new Uint8Array(await back!.data!.arrayBuffer())).toEqual(bytes)
    expect(back!.data!.type).toBe('application/octet-stream')
    expect(await memory.artifacts.get('missing')).toBeUndefined()
    // stats count the bytes of what is on the device
    const before = (await memory.stats('p')).bytes
    await memory.artifacts.put('p', { name: 'big', mimeType: 'text/plain', data: 'x'.repeat(10_000) })
    expect((await memory.stats('p')).bytes - before).toBeGreaterThan(10_000)
  })

  it('lists newest first, paged, by run; deletes', async () => {
    const { clock, memory } = await setup()
    const made = []
    for (let i = 0; i < 5; i++) {
      clock.advance(1)
      made.push(await memory.artifacts.put('p', { name: `a${i}`, mimeType: 'text/plain', data: `${i}`, ...(i % 2 === 0 ? { runId: 'even' } : {}) }))
    }
    const first = await memory.artifacts.list('p', { limit: 2 })
    expect(first.items.map((a) => a.name)).toEqual(['a4', 'a3'])
    expect(first.items[0]).not.toHaveProperty('data')
    const second = await memory.artifacts.list('p', { limit: 2, after: first.next! })
    expect(second.items.map((a) => a.name)).toEqual(['a2', 'a1'])
    expect((await memory.artifacts.list('p', { runId: 'even' })).items.map((a) => a.name)).toEqual(['a4', 'a2', 'a0'])
    expect(await memory.artifacts.delete(made[4]!.id)).toBe(true)
    expect(await memory.artifacts.delete(made[4]!.id)).toBe(false)
    expect(await memory.artifacts.delete('missing')).toBe(false)
    expect(await memory.artifacts.get(made[4]!.id)).toBeUndefined()
    expect((await memory.artifacts.list('p')).items).toHaveLength(4)
    expect(await memory.artifacts.list('unknown')).toEqual({ items: [] })
  })

  it('keeps within the byte budget: quota_exceeded, and deleting frees bytes', async () => {
    const { memory } = await setup({ maxArtifactBytes: 10 })
    const a = await memory.artifacts.put('p', { name: 'a', mimeType: 'text/plain', data: '123456' })
    await expect(memory.artifacts.put('p', { name: 'b', mimeType: 'text/plain', data: '12345' })).rejects.toMatchObject({ code: 'quota_exceeded' })
    expect((await memory.artifacts.list('p')).items).toHaveLength(1)
    await memory.artifacts.delete(a.id)
    await memory.artifacts.put('p', { name: 'b', mimeType: 'text/plain', data: '1234567890' })
    await expect(openTestMemory({ maxArtifactBytes: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(() => artifactsModule({ maxBytes: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => artifactsModule({ max: 1 } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })

  it('refuses bad input and writes nothing', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['artifacts'] }, (batch) => void seen.push(...batch))
    const ok = { name: 'x', mimeType: 'text/plain', data: 'x' }
    for (const [projectId, input, code] of [
      ['p', { ...ok, name: '' }, 'invalid_input'],
      ['p', { ...ok, name: 'n'.repeat(513) }, 'limit_exceeded'],
      ['p', { ...ok, mimeType: 'text' }, 'invalid_input'],
      ['p', { ...ok, mimeType: 7 }, 'invalid_input'],
      ['p', { ...ok, data: 42 }, 'invalid_input'],
      ['p', { ...ok, data: new Uint8Array(2) }, 'invalid_input'],
      ['p', { ...ok, runId: '' }, 'invalid_input'],
      ['p', { ...ok, meta: { f: () => 1 } }, 'invalid_input'],
      ['p', { ...ok, meta: { big: 'x'.repeat(70_000) } }, 'limit_exceeded'],
      ['p', { ...ok, colour: 1 }, 'invalid_input'],
      ['', ok, 'invalid_input'],
      ['nope', ok, 'not_found'],
    ] as const)
      await expect(memory.artifacts.put(projectId, input as never)).rejects.toMatchObject({ code })
    await expect(memory.artifacts.list('p', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.artifacts.list('p', { runId: 5 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.artifacts.get('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.artifacts.attach('x', 'text' as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.artifacts.attach('missing', new Blob(['x']))).rejects.toMatchObject({ code: 'not_found' })
    expect((await memory.artifacts.list('p')).items).toEqual([])
    const marker = await memory.artifacts.put('p', ok)
    expect(seen).toEqual([{ kind: 'artifacts', op: 'put', id: marker.id, projectId: 'p', origin: 'local' }])
  })

  it('travels in a JSON dump as base64, checked on import', async () => {
    const { memory } = await setup()
    const a = await memory.artifacts.put('p', { name: 'hello.txt', mimeType: 'text/plain', data: 'Hello' })
    const dump = JSON.parse(JSON.stringify(await memory.export('p')))
    expect(dump.tables.artifacts[0]).toMatchObject({ id: a.id, dataBase64: 'SGVsbG8=', sha256: HELLO_SHA })
    expect(dump.tables.artifacts[0]).not.toHaveProperty('data')
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect(await (await other.artifacts.get(a.id))!.data!.text()).toBe('Hello')
    const tampered = structuredClone(dump)
    tampered.tables.artifacts[0].dataBase64 = 'SGVsbGE=' // 'Hella': same size, other bytes
    const third = await openTestMemory()
    await expect(third.import(tampered, { mode: 'merge' })).rejects.toMatchObject({ code: 'invalid_input' })
    tampered.tables.artifacts[0].dataBase64 = 'not base64!'
    await expect(third.import(tampered, { mode: 'merge' })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await third.projects.get('p')).toBeUndefined()
    // an import past the budget is refused whole
    const small = await openTestMemory({ maxArtifactBytes: 4 })
    await expect(small.import(dump, { mode: 'merge' })).rejects.toMatchObject({ code: 'quota_exceeded' })
    expect(await small.projects.get('p')).toBeUndefined()
  })

  it('syncs metadata only: the bytes arrive when the app attaches them', async () => {
    const { memory } = await setup()
    await memory.projects.update('p', { sync: { enabled: true } })
    const a = await memory.artifacts.put('p', { name: 'r.md', mimeType: 'text/markdown', data: '# R' })
    const [entry] = await replicationOf(memory).pending({ projectId: 'p' })
    expect(entry!.record!.row).not.toHaveProperty('data')
    expect(entry!.record!.row).not.toHaveProperty('localSize')
    const other = await openTestMemory()
    await other.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    expect(await replicationOf(other).applyRemote([entry!.record!])).toMatchObject({ applied: 1 })
    const arrived = await other.artifacts.get(a.id)
    expect(arrived).toMatchObject({ name: 'r.md', onDevice: false })
    expect(arrived).not.toHaveProperty('data')
    await expect(other.artifacts.attach(a.id, new Blob(['# other']))).rejects.toMatchObject({ code: 'conflict' })
    const data = (await memory.artifacts.get(a.id))!.data!
    expect(await other.artifacts.attach(a.id, data)).toMatchObject({ onDevice: true })
    expect(await (await other.artifacts.get(a.id))!.data!.text()).toBe('# R')
    // a synced delete drops the bytes
    await memory.artifacts.delete(a.id)
    const tombstone = (await replicationOf(memory).pending({ projectId: 'p' })).at(-1)!.record!
    await replicationOf(other).applyRemote([tombstone])
    expect(await other.artifacts.get(a.id)).toBeUndefined()
    const bad = { ...entry!.record!, row: { ...entry!.record!.row, sha256: 'nothex' } }
    expect((await replicationOf(other).applyRemote([bad])).rejected).toHaveLength(1)
  })

  it('is a module of its own', async () => {
    const memory = await createMemory({
      appId: 'a',
      userId: 'artifacts-module',
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      modules: [artifactsModule({ maxBytes: 100 })],
    })
    expect((await memory.artifacts.put('user', { name: 'x', mimeType: 'text/plain', data: 'x' })).size).toBe(1)
    await memory.close()
    await expect(memory.artifacts.list('user')).rejects.toMatchObject({ code: 'closed' })
  })
})
