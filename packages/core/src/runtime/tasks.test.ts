import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

async function setup() {
  const clock = testClock(Date.UTC(2026, 0, 31, 9))
  const memory = await openTestMemory({ now: clock.now })
  const project = await memory.projects.create({ name: 'P', id: 'p' })
  return { clock, memory, project }
}

describe('tasks', () => {
  it('creates a pending task in an existing project', async () => {
    const { clock, memory } = await setup()
    const t = await memory.tasks.create('p', { description: '  Water the plants ', dueAt: clock.now() + HOUR, kind: 'reminder' })
    expect(t).toEqual({
      id: expect.any(String),
      projectId: 'p',
      description: 'Water the plants',
      dueAt: clock.now() + HOUR,
      repeat: null,
      kind: 'reminder',
      status: 'pending',
      retries: 0,
      createdAt: clock.now(),
    })
    await expect(memory.tasks.create('nope', { description: 'x', dueAt: 1 })).rejects.toMatchObject({ code: 'not_found' })
    await memory.projects.archive('p')
    await expect(memory.tasks.create('p', { description: 'y', dueAt: 1 })).rejects.toMatchObject({ code: 'not_found' })
  })

  it('dedupes exact and near duplicates, but not different or distant tasks', async () => {
    const { clock, memory } = await setup()
    const due = clock.now() + DAY
    const a = await memory.tasks.create('p', { description: 'Call Mom tomorrow', dueAt: due })
    expect(await memory.tasks.create('p', { description: 'call mom tomorrow!', dueAt: due })).toEqual(a)
    expect(await memory.tasks.create('p', { description: 'call mom tomorow', dueAt: due + 20 * MIN })).toEqual(a)
    const distant = await memory.tasks.create('p', { description: 'call mom tomorrow', dueAt: due + 31 * MIN })
    const other = await memory.tasks.create('p', { description: 'buy bread', dueAt: due })
    expect(new Set([a.id, distant.id, other.id]).size).toBe(3)
    await memory.projects.create({ name: 'Q', id: 'q' })
    expect((await memory.tasks.create('q', { description: 'Call Mom tomorrow', dueAt: due })).id).not.toBe(a.id)
    // a finished task no longer dedupes
    await memory.tasks.complete(other.id)
    expect((await memory.tasks.create('p', { description: 'buy bread', dueAt: due })).id).not.toBe(other.id)
  })

  it('dedupes parallel creates of the same task to one', async () => {
    const { memory } = await setup()
    const made = await Promise.all(Array.from({ length: 10 }, () => memory.tasks.create('p', { description: 'Backup', dueAt: 5 })))
    expect(new Set(made.map((t) => t.id)).size).toBe(1)
    expect((await memory.tasks.list()).items).toHaveLength(1)
  })

  it('completes one-shot and repeating tasks; monthly handles month ends', async () => {
    const { clock, memory } = await setup()
    const once = await memory.tasks.create('p', { description: 'once', dueAt: clock.now() })
    expect(await memory.tasks.complete(once.id)).toMatchObject({ status: 'done' })
    await expect(memory.tasks.complete(once.id)).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.tasks.complete('missing')).rejects.toMatchObject({ code: 'not_found' })
    const monthly = await memory.tasks.create('p', { description: 'pay rent', dueAt: clock.now(), repeat: 'monthly' })
    const feb = await memory.tasks.complete(monthly.id)
    expect(new Date(feb.dueAt).toISOString()).toBe('2026-02-28T09:00:00.000Z')
    clock.set(feb.dueAt)
    const mar = await memory.tasks.complete(monthly.id)
    expect(new Date(mar.dueAt).toISOString()).toBe('2026-03-31T09:00:00.000Z')
    const daily = await memory.tasks.create('p', { description: 'standup', dueAt: clock.now() - 3 * DAY, repeat: 'daily' })
    expect((await memory.tasks.complete(daily.id)).dueAt).toBe(clock.now() + DAY) // missed days skipped
    const weekly = await memory.tasks.create('p', { description: 'review', dueAt: clock.now() + HOUR, repeat: 'weekly' })
    expect((await memory.tasks.complete(weekly.id)).dueAt).toBe(clock.now() + HOUR + 7 * DAY)
  })

  it('fails with retries and backoff, then ends the task', async () => {
    const { clock, memory } = await setup()
    const t = await memory.tasks.create('p', { description: 'sync mail', dueAt: clock.now() })
    expect(await memory.tasks.fail(t.id, 'network', { maxRetries: 2 })).toEqual({ retrying: true })
    let [row] = (await memory.tasks.list()).items
    expect(row).toMatchObject({ status: 'pending', retries: 1, lastError: 'network', dueAt: clock.now() + MIN })
    expect(await memory.tasks.due()).toEqual([])
    expect(await memory.tasks.fail(t.id, 'network again', { maxRetries: 2 })).toEqual({ retrying: true })
    ;[row] = (await memory.tasks.list()).items
    expect(row).toMatchObject({ retries: 2, dueAt: clock.now() + 2 * MIN })
    expect(await memory.tasks.fail(t.id, 'gave up', { maxRetries: 2 })).toEqual({ retrying: false })
    ;[row] = (await memory.tasks.list()).items
    expect(row).toMatchObject({ status: 'failed', lastError: 'gave up' })
    await expect(memory.tasks.fail(t.id, 'x', { maxRetries: 2 })).rejects.toMatchObject({ code: 'conflict' })
    const z = await memory.tasks.create('p', { description: 'no retries', dueAt: 1 })
    expect(await memory.tasks.fail(z.id, 'boom', { maxRetries: 0 })).toEqual({ retrying: false })
    await expect(memory.tasks.fail(z.id, 'x', {} as never)).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('a repeating task that fails and then completes resets its retries', async () => {
    const { clock, memory } = await setup()
    const t = await memory.tasks.create('p', { description: 'digest', dueAt: clock.now(), repeat: 'daily' })
    await memory.tasks.fail(t.id, 'oops', { maxRetries: 3 })
    const next = await memory.tasks.complete(t.id)
    expect(next).toMatchObject({ retries: 0, status: 'pending', dueAt: t.dueAt + DAY })
    expect(next).not.toHaveProperty('lastError')
  })

  it('cancels and updates by id prefix; ambiguous is conflict, none is false', async () => {
    const { clock, memory } = await setup()
    const a = await memory.tasks.create('p', { description: 'alpha', dueAt: clock.now() })
    const b = await memory.tasks.create('p', { description: 'beta', dueAt: clock.now() + HOUR })
    let common = 0
    while (a.id[common] === b.id[common]) common++
    await expect(memory.tasks.cancel(a.id.slice(0, common))).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.tasks.update(a.id.slice(0, common), { description: 'x' })).rejects.toMatchObject({ code: 'conflict' })
    expect(await memory.tasks.cancel('ffffffff-none')).toBe(false)
    expect(await memory.tasks.update('ffffffff-none', { description: 'x' })).toBe(false)
    expect(await memory.tasks.update(b.id.slice(0, common + 1), { description: 'beta two', dueAt: clock.now() + 2 * HOUR, repeat: 'weekly' })).toBe(true)
    expect(await memory.tasks.cancel(a.id.slice(0, common + 1))).toBe(true)
    expect(await memory.tasks.cancel(a.id)).toBe(false)
    const all = (await memory.tasks.list()).items
    expect(all.map((t) => [t.description, t.status, t.repeat])).toEqual([
      ['alpha', 'cancelled', null],
      ['beta two', 'pending', 'weekly'],
    ])
    // once a is cancelled, the short prefix is no longer ambiguous among pending tasks
    expect(await memory.tasks.update(a.id.slice(0, common), { dueAt: 1 })).toBe(true)
    await expect(memory.tasks.update(b.id, { repeat: 'yearly' as never })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.tasks.cancel('')).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('defers, lists by project and status, and returns due tasks', async () => {
    const { clock, memory } = await setup()
    await memory.projects.create({ name: 'Q', id: 'q' })
    const late = await memory.tasks.create('p', { description: 'late', dueAt: clock.now() + DAY })
    const soon = await memory.tasks.create('q', { description: 'soon', dueAt: clock.now() - MIN })
    const now = await memory.tasks.create('p', { description: 'now', dueAt: clock.now() })
    expect((await memory.tasks.due()).map((t) => t.description)).toEqual(['soon', 'now'])
    expect((await memory.tasks.due(clock.now() + DAY)).map((t) => t.description)).toEqual(['soon', 'now', 'late'])
    await memory.tasks.defer(now.id, clock.now() + 2 * DAY)
    expect((await memory.tasks.due()).map((t) => t.id)).toEqual([soon.id])
    await memory.tasks.complete(soon.id)
    expect((await memory.tasks.list({ projectId: 'p' })).items.map((t) => t.id)).toEqual([late.id, now.id])
    expect((await memory.tasks.list({ status: 'done' })).items.map((t) => t.id)).toEqual([soon.id])
    expect(await memory.tasks.list({ projectId: 'q', status: 'pending' })).toEqual({ items: [] })
    await expect(memory.tasks.defer(soon.id, 1)).rejects.toMatchObject({ code: 'conflict' })
    await expect(memory.tasks.defer('missing', 1)).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.tasks.list({ status: 'odd' as never })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('rejects bad input without writing; emits tasks changes with the project', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['tasks'] }, (b) => seen.push(...b))
    for (const { projectId, ...bad } of [
      { projectId: 'p', description: '', dueAt: 1 },
      { projectId: 'p', description: 'x', dueAt: -1 },
      { projectId: 'p', description: 'x', dueAt: 1.5 },
      { projectId: 'p', description: 'x', dueAt: 1, repeat: 'hourly' },
      { projectId: '', description: 'x', dueAt: 1 },
      // past the last time a Date can hold: the schedule would turn into NaN
      { projectId: 'p', description: 'x', dueAt: 8.64e15 + 1, repeat: 'monthly' },
      { projectId: 'p', description: 'x', dueAt: 1e300 },
    ])
      await expect(memory.tasks.create(projectId, bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.tasks.list()).toEqual({ items: [] })
    const t = await memory.tasks.create('p', { description: 'x', dueAt: 1 })
    expect(seen).toEqual([{ kind: 'tasks', op: 'put', id: t.id, projectId: 'p', origin: 'local' }])
  })

  it('keeps tasks across a reopen', async () => {
    const { clock, memory } = await setup()
    const t = await memory.tasks.create('p', { description: 'rent', dueAt: clock.now(), repeat: 'monthly' })
    await memory.tasks.fail(t.id, 'bank down', { maxRetries: 5 })
    await memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId, now: clock.now })
    const [row] = (await reopened.tasks.list()).items
    expect(row).toMatchObject({ id: t.id, retries: 1, lastError: 'bank down', repeat: 'monthly' })
    clock.set(row!.dueAt)
    // the monthly anchor (31st) survives the reopen
    expect(new Date((await reopened.tasks.complete(t.id)).dueAt).toISOString()).toBe('2026-02-28T09:00:00.000Z')
    expect(await reopened.tasks.create('p', { description: 'Rent', dueAt: row!.dueAt + 40 * 86_400_000 })).toMatchObject({ id: expect.any(String) })
  })
})
