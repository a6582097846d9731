import { describe, expect, it } from 'vitest'
import type { Task } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { HANDLE_ALPHABET, isHandle, normaliseHandle } from './task-handle.js'

async function setup() {
  const clock = testClock(Date.UTC(2026, 0, 31, 9))
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  return { clock, memory }
}

/** Two tasks whose handles share their first character (32 first characters: 33 tasks always hold a pair). */
function sharingFirst(tasks: Task[]): [Task, Task] {
  const seen = new Map<string, Task>()
  for (const t of tasks) {
    const other = seen.get(t.handle[0]!)
    if (other) return [other, t]
    seen.set(t.handle[0]!, t)
  }
  throw new Error('no pair')
}

describe('task handles', () => {
  it('reads typed handles leniently and refuses what cannot be one', () => {
    expect(normaliseHandle(' #K3F9Q ')).toBe('k3f9q')
    expect(normaliseHandle('IlO')).toBe('110')
    expect(normaliseHandle('u')).toBeUndefined()
    expect(normaliseHandle('abcdef')).toBeUndefined()
    expect(normaliseHandle('#')).toBeUndefined()
    expect(isHandle('k3f9q')).toBe(true)
    expect(isHandle('K3F9Q')).toBe(false)
    expect(HANDLE_ALPHABET).toHaveLength(32)
  })

  it('gives every task a unique five-character handle', async () => {
    const { memory } = await setup()
    const tasks = await Promise.all(Array.from({ length: 100 }, (_, i) => memory.tasks.create('p', { description: `task ${i}`, dueAt: i * 3_600_000 })))
    expect(tasks.every((t) => isHandle(t.handle))).toBe(true)
    expect(new Set(tasks.map((t) => t.handle)).size).toBe(100)
    const listed = (await memory.tasks.list({ limit: 1000 })).items
    expect(new Set(listed.map((t) => t.handle))).toEqual(new Set(tasks.map((t) => t.handle)))
    // tasks made in the same minute share id prefixes, never handle prefixes of full length
    expect(new Set(tasks.map((t) => t.id.slice(0, 8))).size).toBe(1)
  })

  it('cancels and updates by a typed handle prefix; ambiguous is conflict, none is false', async () => {
    const { clock, memory } = await setup()
    const tasks = await Promise.all(
      Array.from({ length: 33 }, (_, i) => memory.tasks.create('p', { description: `chore ${i}`, dueAt: clock.now() + i * 3_600_000 })),
    )
    const [a, b] = sharingFirst(tasks)
    await expect(memory.tasks.cancel(a.handle[0]!)).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.tasks.update(a.handle[0]!.toUpperCase(), { description: 'x' })).rejects.toMatchObject({ code: 'conflict' })
    expect(await memory.tasks.update(`#${b.handle.toUpperCase()}`, { description: 'renamed' })).toBe(true)
    expect(await memory.tasks.cancel(a.handle)).toBe(true)
    expect(await memory.tasks.cancel(a.handle)).toBe(false)
    // with a cancelled, one character names b alone among pending tasks (if no third task shares it, and no id starts with it)
    const sharing = tasks.filter((t) => t.handle[0] === a.handle[0] && t.id !== a.id)
    const idsShareIt = tasks.some((t) => t.id.toLowerCase().startsWith(a.handle[0]!))
    if (sharing.length === 1 && !idsShareIt) expect(await memory.tasks.cancel(a.handle[0]!)).toBe(true)
    const all = (await memory.tasks.list({ limit: 100 })).items
    expect(all.find((t) => t.id === b.id)).toMatchObject({ description: 'renamed' })
    expect(all.find((t) => t.id === a.id)).toMatchObject({ status: 'cancelled' })
    // a prefix that cannot be a handle or an id matches nothing
    expect(await memory.tasks.cancel('uuuu')).toBe(false)
    expect(await memory.tasks.update('zzzzzz', { dueAt: 1 })).toBe(false)
    await expect(memory.tasks.cancel(' ')).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('keeps handles through export and import; gives fresh ones to missing or taken handles', async () => {
    const { memory } = await setup()
    const t = await memory.tasks.create('p', { description: 'water', dueAt: 5 })
    const dump = await memory.export()
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect((await other.tasks.list()).items[0]).toMatchObject({ id: t.id, handle: t.handle })
    // a dump from before handles: the task gets one
    const old = structuredClone(dump)
    const oldTasks = old.tables.tasks as Record<string, unknown>[]
    delete oldTasks[0]!.handle
    oldTasks[0]!.id = 'old-task'
    await other.import(old, { mode: 'merge' })
    const imported = (await other.tasks.list()).items.find((x) => x.id === 'old-task')!
    expect(isHandle(imported.handle)).toBe(true)
    // a handle another task holds is replaced, never shared
    const clash = structuredClone(dump)
    const clashTasks = clash.tables.tasks as Record<string, unknown>[]
    clashTasks[0]!.id = 'clash-task'
    await other.import(clash, { mode: 'merge' })
    const handles = (await other.tasks.list()).items.map((x) => x.handle)
    expect(new Set(handles).size).toBe(3)
    expect(await other.tasks.cancel(t.handle)).toBe(true)
  })
})
