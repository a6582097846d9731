import { afterEach, describe, expect, it, vi } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'

describe('change feed', () => {
  afterEach(() => vi.restoreAllMocks())

  it('a throwing listener neither fails the write nor starves the others, and is reported', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const memory = await openTestMemory()
    const seen: string[] = []
    await memory.changes.subscribe({}, () => {
      throw new Error('listener bug')
    })
    await memory.changes.subscribe({ kinds: ['facts'] }, (batch) => seen.push(...batch.map((c) => c.id)))
    const fact = await memory.facts.set('user', 'name', 'Ada')
    expect(seen).toEqual([fact.id])
    expect(logged).toHaveBeenCalledWith('[engram] a listener failed:', expect.objectContaining({ message: 'listener bug' }))
    await memory.close()
  })

  it('filters by project and kind, and unsubscribe stops delivery', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    const batches: string[][] = []
    const off = await memory.changes.subscribe({ projectId: 'p', kinds: ['facts'] }, (b) => batches.push(b.map((c) => `${c.kind}:${c.id}`)))
    await memory.facts.set('user', 'x', 1)
    await memory.blocks.set('p', 'persona', 'hi')
    await memory.facts.set('p', 'y', 2)
    await off()
    await memory.facts.set('p', 'z', 3)
    expect(batches).toEqual([['facts:p/y']])
    await memory.close()
  })
})
