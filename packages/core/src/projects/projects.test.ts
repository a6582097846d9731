import { describe, expect, it } from 'vitest'
import { MemoryError } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

describe('projects', () => {
  it('has the built-in user project', async () => {
    const memory = await openTestMemory()
    expect(await memory.projects.get('user')).toMatchObject({ id: 'user', sync: { enabled: false } })
    expect((await memory.projects.list()).map((p) => p.id)).toEqual(['user'])
  })

  it('creates, renames, lists and archives', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    clock.advance(10)
    const p = await memory.projects.create({ name: '  Trip to Rome ', sync: { enabled: true } })
    expect(p).toMatchObject({ name: 'Trip to Rome', sync: { enabled: true }, createdAt: clock.now() })
    clock.advance(5)
    const renamed = await memory.projects.update(p.id, { name: 'Rome' })
    expect(renamed).toMatchObject({ name: 'Rome', createdAt: p.createdAt, updatedAt: clock.now() })
    expect((await memory.projects.list()).map((x) => x.id)).toEqual(['user', p.id])
    await memory.projects.archive(p.id)
    expect((await memory.projects.list()).map((x) => x.id)).toEqual(['user'])
    expect((await memory.projects.list({ includeArchived: true })).map((x) => x.id)).toEqual(['user', p.id])
  })

  it('rejects bad input with codes and writes nothing', async () => {
    const memory = await openTestMemory()
    const seen: unknown[] = []
    await memory.changes.subscribe({}, (b) => seen.push(...b))
    await expect(memory.projects.create({ name: '' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.create({ name: 'x', id: ' spaced' })).rejects.toBeInstanceOf(MemoryError)
    await expect(memory.projects.create({ name: 'x', sync: { enabled: 'yes' } as never })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.create({ name: 'dup', id: 'user' })).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.projects.update('nope', { name: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.projects.archive('user')).rejects.toMatchObject({ code: 'invalid_input' })
    expect(seen).toEqual([])
    expect(await memory.projects.list({ includeArchived: true })).toHaveLength(1)
  })

  it('emits one change batch per committed write', async () => {
    const memory = await openTestMemory()
    const batches: unknown[][] = []
    const off = await memory.changes.subscribe({ kinds: ['projects'] }, (b) => batches.push(b))
    const p = await memory.projects.create({ name: 'A', id: 'a' })
    await off()
    await memory.projects.update(p.id, { name: 'B' })
    expect(batches).toEqual([[{ kind: 'projects', op: 'put', id: 'a', projectId: 'a', origin: 'local' }]])
  })

  it('fails with closed after close()', async () => {
    const memory = await openTestMemory()
    await memory.close()
    await memory.close()
    await expect(memory.projects.list()).rejects.toMatchObject({ code: 'closed' })
  })

  it('keeps projects across reopen', async () => {
    const first = await openTestMemory()
    await first.projects.create({ name: 'Kept', id: 'kept' })
    await first.close()
    const again = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId })
    expect(await again.projects.get('kept')).toMatchObject({ name: 'Kept' })
    expect(again.deviceId).toBe(first.deviceId)
  })
})
