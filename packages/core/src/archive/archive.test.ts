import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.projects.create({ name: 'Q', id: 'q' })
  const batches: Change[][] = []
  await memory.changes.subscribe({ kinds: ['passages'] }, (b) => batches.push(b))
  return { clock, memory, batches }
}

describe('archive', () => {
  it('creates a passage and gets it back by id; a missing id is undefined', async () => {
    const { clock, memory, batches } = await setup()
    const passage = await memory.archive.create('p', 'The deploy runbook: build, test, ship.', { tags: ['ops', 'deploy', 'ops'], source: { sessionId: 's1' } })
    expect(passage).toEqual({
      id: expect.any(String),
      projectId: 'p',
      text: 'The deploy runbook: build, test, ship.',
      tags: ['deploy', 'ops'],
      source: { sessionId: 's1' },
      createdAt: clock.now(),
    })
    expect(await memory.archive.get(passage.id)).toEqual(passage)
    expect(await memory.archive.get('missing')).toBeUndefined()
    expect(batches).toEqual([[{ kind: 'passages', op: 'put', id: passage.id, projectId: 'p', origin: 'local' }]])
    // What get returns is a copy: changing it changes nothing stored.
    const copy = (await memory.archive.get(passage.id))!
    copy.tags.push('mutated')
    expect((await memory.archive.get(passage.id))!.tags).toEqual(['deploy', 'ops'])
    await memory.close()
  })

  it("lists one project's passages, newest first", async () => {
    const { clock, memory } = await setup()
    const a = await memory.archive.create('p', 'first')
    clock.advance(10)
    const b = await memory.archive.create('p', 'second')
    await memory.archive.create('q', 'other project')
    expect((await memory.archive.list('p')).items.map((x) => x.id)).toEqual([b.id, a.id])
    expect(await memory.archive.list('nope')).toEqual({ items: [] })
    await memory.close()
  })

  it('deletes: gone from get, list and search; a second delete is false', async () => {
    const { memory, batches } = await setup()
    const kept = await memory.archive.create('p', 'giraffes are tall')
    const gone = await memory.archive.create('p', 'zebras have stripes')
    batches.length = 0
    expect(await memory.archive.delete(gone.id)).toBe(true)
    expect(batches).toEqual([[{ kind: 'passages', op: 'delete', id: gone.id, projectId: 'p', origin: 'local' }]])
    expect(await memory.archive.get(gone.id)).toBeUndefined()
    expect((await memory.archive.list('p')).items.map((x) => x.id)).toEqual([kept.id])
    expect(await memory.search('p', 'zebras')).toEqual([])
    expect(await memory.archive.delete(gone.id)).toBe(false)
    expect(batches).toHaveLength(1)
    await memory.close()
  })

  it('rejects bad input and unknown or archived projects, writing nothing', async () => {
    const { memory, batches } = await setup()
    await memory.projects.archive('q')
    batches.length = 0
    const bad: [() => Promise<unknown>, string][] = [
      [() => memory.archive.create('nope', 'x'), 'not_found'],
      [() => memory.archive.create('q', 'x'), 'not_found'],
      [() => memory.archive.create('p', ''), 'invalid_input'],
      [() => memory.archive.create('p', 'x'.repeat(200_001)), 'limit_exceeded'],
      [() => memory.archive.create('p', 'x', { tags: [''] }), 'invalid_input'],
      [() => memory.archive.create('p', 'x', { tag: 'a' } as never), 'invalid_input'],
      [() => memory.archive.get(''), 'invalid_input'],
      [() => memory.archive.get(42 as never), 'invalid_input'],
      [() => memory.archive.delete(''), 'invalid_input'],
      [() => memory.archive.list(''), 'invalid_input'],
    ]
    for (const [call, code] of bad) await expect(call()).rejects.toMatchObject({ code })
    expect(batches).toEqual([])
    expect(await memory.archive.list('p')).toEqual({ items: [] })
    await memory.close()
    await expect(memory.archive.get('x')).rejects.toMatchObject({ code: 'closed' })
  })
})
