import { describe, expect, it } from 'vitest'
import { createMemory, patternsModule, type Change } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { reinforce } from './patterns.js'

async function setup() {
  const clock = testClock(Date.UTC(2026, 3, 1))
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ id: 'p', name: 'P' })
  return { clock, memory }
}

describe('patterns', () => {
  it('reinforces the same normalised pattern by the noisy-OR rule', async () => {
    const { clock, memory } = await setup()
    const first = await memory.patterns.observe('p', 'Orders coffee on Mondays', { confidence: 0.5 })
    expect(first).toEqual({
      id: 'p/orders%20coffee%20on%20mondays',
      projectId: 'p',
      text: 'Orders coffee on Mondays',
      confidence: 0.5,
      observations: 1,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    })
    clock.advance(1000)
    const second = await memory.patterns.observe('p', '  ORDERS coffee, on mondays! ', { confidence: 0.5 })
    expect(second).toMatchObject({
      id: first.id,
      text: 'ORDERS coffee, on mondays!',
      confidence: 0.75,
      observations: 2,
      createdAt: first.createdAt,
      updatedAt: clock.now(),
    })
    const third = await memory.patterns.observe('p', 'orders coffee on mondays') // default 0.5
    expect(third.confidence).toBe(0.875)
    expect(reinforce(0.875, 0)).toBe(0.875)
    expect(reinforce(0.2, 1)).toBe(1)
    expect(await memory.patterns.list('p')).toEqual([third])
  })

  it('lists by confidence, then most recent, above minConfidence, up to limit', async () => {
    const { clock, memory } = await setup()
    await memory.patterns.observe('p', 'low', { confidence: 0.1 })
    clock.advance(1)
    await memory.patterns.observe('p', 'high', { confidence: 0.9 })
    clock.advance(1)
    await memory.patterns.observe('p', 'mid older', { confidence: 0.7 })
    clock.advance(1)
    await memory.patterns.observe('p', 'mid newer', { confidence: 0.7 })
    expect((await memory.patterns.list('p')).map((x) => x.text)).toEqual(['high', 'mid newer', 'mid older', 'low'])
    expect((await memory.patterns.list('p', { minConfidence: 0.7 })).map((x) => x.text)).toEqual(['high', 'mid newer', 'mid older'])
    expect((await memory.patterns.list('p', { limit: 1 })).map((x) => x.text)).toEqual(['high'])
    expect(await memory.patterns.list('unknown')).toEqual([])
  })

  it('refuses bad input and writes nothing', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['patterns'] }, (batch) => void seen.push(...batch))
    for (const [args, code] of [
      [['p', ''], 'invalid_input'],
      [['p', '!!! ...'], 'invalid_input'],
      [['p', 42], 'invalid_input'],
      [['p', 'x', { confidence: 1.5 }], 'invalid_input'],
      [['p', 'x', { confidence: -0.1 }], 'invalid_input'],
      [['p', 'x', { confidence: Number.NaN }], 'invalid_input'],
      [['p', 'x', { confidance: 0.5 }], 'invalid_input'],
      [['', 'x'], 'invalid_input'],
      [['p', 'x'.repeat(2001)], 'limit_exceeded'],
      [['nope', 'x'], 'not_found'],
    ] as const)
      await expect(memory.patterns.observe(...(args as unknown as [string, string]))).rejects.toMatchObject({ code })
    await memory.projects.archive('p')
    await expect(memory.patterns.observe('p', 'x')).rejects.toMatchObject({ code: 'not_found' })
    for (const options of [{ minConfidence: 2 }, { limit: 0 }, { limit: 1001 }, { min: 0.5 }]) {
      await expect(memory.patterns.list('user', options as never)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    await expect(memory.patterns.list('')).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.patterns.observe('user', 'marker')
    expect(seen).toEqual([{ kind: 'patterns', op: 'put', id: 'user/marker', projectId: 'user', origin: 'local' }])
  })

  it("is a context section: patterns at or above the threshold, the user's too, inside the budget", async () => {
    const { memory } = await setup()
    await memory.patterns.observe('p', 'Prefers short answers', { confidence: 0.9 })
    await memory.patterns.observe('p', 'Sometimes asks about weather', { confidence: 0.4 })
    await memory.patterns.observe('user', 'Works late', { confidence: 0.7 })
    const built = await memory.context.build('p', { budget: 500 })
    expect(built.sections.map((s) => s.name)).toEqual(['patterns'])
    expect(built.text).toBe('<patterns>\n- Prefers short answers (confidence 0.90)\n- user/Works late (confidence 0.70)\n</patterns>')
    const lower = await memory.context.build('p', { budget: 500, patternThreshold: 0.3 })
    expect(lower.sections[0]!.items).toBe(3)
    expect((await memory.context.build('p', { budget: 500, sections: ['facts'] })).sections).toEqual([])
    const tight = await memory.context.build('p', { budget: 20 })
    expect(tight.tokens).toBeLessThanOrEqual(20)
    expect(tight.omitted).toEqual([{ name: 'patterns', items: 1, reason: 'over budget' }])
    await expect(memory.context.build('p', { budget: 100, patternThreshold: 1.1 })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('travels in project and whole-store dumps; a dump cannot bring in what observe would refuse', async () => {
    const { memory } = await setup()
    await memory.patterns.observe('p', 'Reads in the evening', { confidence: 0.6 })
    const dump = await memory.export('p')
    expect(dump.tables.patterns).toHaveLength(1)
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect(await other.patterns.list('p')).toEqual(await memory.patterns.list('p'))
    const bad = structuredClone(dump)
    ;(bad.tables.patterns as Record<string, unknown>[])[0]!.confidence = 3
    await expect(other.import(bad, { mode: 'merge' })).rejects.toMatchObject({ code: 'invalid_input' })
    const renamed = structuredClone(dump)
    ;(renamed.tables.patterns as Record<string, unknown>[])[0]!.text = 'something else'
    await expect(other.import(renamed, { mode: 'replace' })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await other.patterns.list('p')).toHaveLength(1)
  })

  it('forgets a pattern with a tombstone; observing it again starts afresh', async () => {
    const { clock, memory } = await setup()
    await memory.patterns.observe('p', 'Skips breakfast', { confidence: 0.9 })
    clock.advance(10)
    expect(await memory.patterns.delete('p', 'skips BREAKFAST')).toBe(true)
    expect(await memory.patterns.delete('p', 'skips breakfast')).toBe(false)
    expect(await memory.patterns.delete('p', 'never seen')).toBe(false)
    expect(await memory.patterns.list('p')).toEqual([])
    expect((await memory.export('p')).tables.patterns).toMatchObject([{ deletedAt: clock.now() }])
    clock.advance(10)
    expect(await memory.patterns.observe('p', 'Skips breakfast', { confidence: 0.3 })).toMatchObject({
      confidence: 0.3,
      observations: 1,
      createdAt: clock.now(),
    })
    await expect(memory.patterns.delete('p', '...')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.patterns.delete('', 'x')).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('is a module of its own', async () => {
    const memory = await createMemory({ appId: 'a', userId: 'patterns-module', indexedDB: new IDBFactory(), IDBKeyRange, modules: [patternsModule()] })
    expect((await memory.patterns.observe('user', 'x')).observations).toBe(1)
    expect('context' in memory).toBe(false)
    await memory.close()
    await expect(memory.patterns.list('user')).rejects.toMatchObject({ code: 'closed' })
  })
})
