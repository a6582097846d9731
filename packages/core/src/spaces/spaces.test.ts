import { describe, expect, it } from 'vitest'
import { createMemory, spacesModule, type Change } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup() {
  const clock = testClock(Date.UTC(2026, 4, 1))
  const memory = await openTestMemory({ now: clock.now })
  return { clock, memory }
}

describe('spaces', () => {
  it('creates, gets, lists, renames and updates spaces', async () => {
    const { clock, memory } = await setup()
    const work = await memory.spaces.create({ name: ' Work ', id: 'work', sync: { enabled: true } })
    expect(work).toEqual({ id: 'work', name: 'Work', sync: { enabled: true }, createdAt: clock.now(), updatedAt: clock.now() })
    clock.advance(1)
    const home = await memory.spaces.create({ name: 'Home' })
    expect(home.sync).toEqual({ enabled: false })
    expect(await memory.spaces.get('work')).toEqual(work)
    expect(await memory.spaces.get('none')).toBeUndefined()
    clock.advance(1)
    expect(await memory.spaces.rename('work', 'Office')).toMatchObject({ name: 'Office', updatedAt: clock.now() })
    expect(await memory.spaces.update(home.id, { sync: { enabled: true } })).toMatchObject({ name: 'Home', sync: { enabled: true } })
    expect((await memory.spaces.list()).map((s) => s.name)).toEqual(['Office', 'Home'])
  })

  it("puts projects in spaces, lists them by space, and defaults their sync to the space's", async () => {
    const { memory } = await setup()
    await memory.spaces.create({ name: 'Work', id: 'work', sync: { enabled: true } })
    await memory.spaces.create({ name: 'Home', id: 'home' })
    const a = await memory.projects.create({ name: 'A', id: 'a', spaceId: 'work' })
    const b = await memory.projects.create({ name: 'B', id: 'b', spaceId: 'work', sync: { enabled: false } })
    const c = await memory.projects.create({ name: 'C', id: 'c', spaceId: 'home' })
    expect([a.sync.enabled, b.sync.enabled, c.sync.enabled]).toEqual([true, false, false])
    expect(a.spaceId).toBe('work')
    expect((await memory.projects.list({ spaceId: 'work' })).map((p) => p.id)).toEqual(['a', 'b'])
    expect((await memory.projects.list()).map((p) => p.id).sort()).toEqual(['a', 'b', 'c', 'user'])
    // a space's later setting changes only projects created after it
    await memory.spaces.update('work', { sync: { enabled: false } })
    expect((await memory.projects.get('a'))!.sync.enabled).toBe(true)
    expect((await memory.projects.create({ name: 'D', id: 'd', spaceId: 'work' })).sync.enabled).toBe(false)
    // moving in and out
    expect(await memory.projects.update('c', { spaceId: 'work' })).toMatchObject({ spaceId: 'work' })
    expect(await memory.projects.update('c', { spaceId: null })).not.toHaveProperty('spaceId')
    await memory.projects.archive('d')
    expect((await memory.projects.list({ spaceId: 'work', includeArchived: true })).map((p) => p.id)).toEqual(['a', 'b', 'd'])
  })

  it('deletes only an empty space (archived projects count)', async () => {
    const { memory } = await setup()
    await memory.spaces.create({ name: 'Tmp', id: 'tmp' })
    await memory.projects.create({ name: 'P', id: 'p', spaceId: 'tmp' })
    await memory.projects.archive('p')
    await expect(memory.spaces.delete('tmp')).rejects.toMatchObject({ code: 'conflict' })
    await memory.projects.update('p', { spaceId: null })
    await memory.spaces.delete('tmp')
    expect(await memory.spaces.list()).toEqual([])
    await expect(memory.spaces.delete('tmp')).rejects.toMatchObject({ code: 'not_found' })
  })

  it('refuses bad input and writes nothing', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['spaces', 'projects'] }, (batch) => void seen.push(...batch))
    await memory.spaces.create({ name: 'S', id: 's' })
    for (const [input, code] of [
      [{ name: '' }, 'invalid_input'],
      [{ name: 'x', id: ' bad ' }, 'invalid_input'],
      [{ name: 'x', sync: true }, 'invalid_input'],
      [{ name: 'x', colour: 'red' }, 'invalid_input'],
      [{ name: 'x'.repeat(201) }, 'limit_exceeded'],
      [{ name: 'again', id: 's' }, 'conflict'],
    ] as const)
      await expect(memory.spaces.create(input as never)).rejects.toMatchObject({ code })
    await expect(memory.spaces.rename('s', '')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.spaces.rename('none', 'x')).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.spaces.update('s', { sync: { enabled: 'yes' } } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.spaces.update('s', { nom: 'x' } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.spaces.delete('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.create({ name: 'P', spaceId: 'none' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.projects.create({ name: 'P', spaceId: 7 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.list({ spaceId: '' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.update('user', { spaceId: 'none' })).rejects.toMatchObject({ code: 'not_found' })
    expect((await memory.projects.list()).map((p) => p.id)).toEqual(['user'])
    expect((await memory.spaces.list()).map((s) => s.name)).toEqual(['S'])
    expect(seen).toEqual([{ kind: 'spaces', op: 'put', id: 's', projectId: '', origin: 'local' }])
  })

  it('travels in whole-store dumps; a project whose space is unknown lands outside any space', async () => {
    const { memory } = await setup()
    await memory.spaces.create({ name: 'Work', id: 'work' })
    await memory.projects.create({ name: 'A', id: 'a', spaceId: 'work' })
    const whole = await memory.export()
    const other = await openTestMemory()
    await other.import(whole, { mode: 'merge' })
    expect(await other.spaces.get('work')).toMatchObject({ name: 'Work' })
    expect((await other.projects.list({ spaceId: 'work' })).map((p) => p.id)).toEqual(['a'])
    const project = await memory.export('a')
    expect(project.tables.spaces).toEqual([])
    const third = await openTestMemory()
    await third.import(project, { mode: 'merge' })
    expect(await third.projects.get('a')).not.toHaveProperty('spaceId')
    await expect(third.import({ ...whole, tables: { spaces: [{ id: 'x', name: 'X' }] } }, { mode: 'merge' })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('is a module of its own', async () => {
    const memory = await createMemory({ appId: 'a', userId: 'spaces-module', indexedDB: new IDBFactory(), IDBKeyRange, modules: [spacesModule()] })
    await memory.spaces.create({ name: 'S', id: 's' })
    expect(await memory.projects.create({ name: 'P', spaceId: 's' })).toMatchObject({ spaceId: 's' })
    await memory.close()
    await expect(memory.spaces.list()).rejects.toMatchObject({ code: 'closed' })
  })
})
