import { describe, expect, it } from 'vitest'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

describe('expiresAt', () => {
  it('expired facts and passages leave search and context.build at once; the sweep purges them', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.facts.set('p', 'parking spot', 'level 3, spot 42', { expiresAt: clock.now() + 60_000 })
    await memory.facts.set('p', 'home city', 'Porto')
    await memory.archive.create('p', 'The parking garage closes at midnight this week.', { expiresAt: clock.now() + 60_000 })
    expect((await memory.facts.get('p', 'parking spot'))?.expiresAt).toBe(clock.now() + 60_000)
    const before = await memory.context.build('p', { query: 'parking', budget: 1_000 })
    expect(before.text).toContain('level 3, spot 42')
    expect(before.text).toContain('parking garage')

    clock.advance(60_000)
    const hits = await memory.search('p', 'parking')
    expect(hits).toEqual([])
    const after = await memory.context.build('p', { query: 'parking', budget: 1_000 })
    expect(after.text).not.toContain('spot 42')
    expect(after.text).not.toContain('parking garage')
    expect(after.text).toContain('Porto')

    expect(await memory.extraction.sweep()).toBe(2)
    expect(await memory.facts.get('p', 'parking spot')).toBeUndefined()
    expect(await memory.facts.history('p', 'parking spot')).toEqual([])
    expect((await memory.archive.list('p')).items).toEqual([])
    expect((await memory.facts.get('p', 'home city'))?.value).toBe('Porto')
    await memory.close()
  })

  it('a bad expiresAt is invalid_input and writes nothing', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    await expect(memory.facts.set('p', 'k', 'v', { expiresAt: -1 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.archive.create('p', 'text', { expiresAt: 'soon' as never })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.facts.get('p', 'k')).toBeUndefined()
    expect((await memory.archive.list('p')).items).toEqual([])
    await memory.close()
  })
})
