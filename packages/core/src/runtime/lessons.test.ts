import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p' })
  return { clock, memory }
}

describe('lessons', () => {
  it('stores a lesson and bumps occurrences for the same normalised rule', async () => {
    const { clock, memory } = await setup()
    const first = await memory.lessons.create('p', 'email', 'Always confirm the recipient.')
    expect(first).toEqual({
      projectId: 'p',
      domain: 'email',
      rule: 'Always confirm the recipient.',
      occurrences: 1,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    })
    clock.advance(10)
    const again = await memory.lessons.create('p', 'email', '  always confirm the   recipient ')
    expect(again).toEqual({ ...first, rule: 'always confirm the   recipient', occurrences: 2, updatedAt: clock.now() })
    expect(await memory.lessons.list('p')).toEqual([again])
    // other domains are separate
    expect((await memory.lessons.create('p', 'calendar', 'Always confirm the recipient.')).occurrences).toBe(1)
  })

  it('keeps the newest 10 per (project, domain)', async () => {
    const { memory } = await setup()
    for (let i = 0; i < 12; i++) await memory.lessons.create('p', 'd', `rule number ${i}`)
    await memory.lessons.create('p', 'd', 'rule number 2') // bumping makes it newest: 3 is evicted next
    await memory.lessons.create('p', 'other', 'kept')
    const kept = (await memory.lessons.list('p', { domain: 'd' })).map((l) => l.rule)
    expect(kept).toHaveLength(10)
    expect(kept).toContain('rule number 11')
    expect(kept).not.toContain('rule number 0')
    expect(kept).not.toContain('rule number 1')
    expect(kept).toContain('rule number 2')
    await memory.lessons.create('p', 'd', 'rule number 12')
    const after = (await memory.lessons.list('p', { domain: 'd' })).map((l) => l.rule)
    expect(after).not.toContain('rule number 3')
    expect(after).toContain('rule number 2')
    expect(await memory.lessons.list('p', { domain: 'other' })).toHaveLength(1)
  })

  it('lists project lessons first, then the user ones, most reinforced first', async () => {
    const { clock, memory } = await setup()
    await memory.lessons.create('user', 'style', 'Be brief')
    await memory.lessons.create('p', 'style', 'Use metric units')
    clock.advance(1)
    await memory.lessons.create('p', 'style', 'Cite sources')
    await memory.lessons.create('p', 'style', 'Use metric units')
    expect((await memory.lessons.list('p')).map((l) => [l.projectId, l.rule])).toEqual([
      ['p', 'Use metric units'],
      ['p', 'Cite sources'],
      ['user', 'Be brief'],
    ])
    expect((await memory.lessons.list('user')).map((l) => l.rule)).toEqual(['Be brief'])
    expect(await memory.lessons.list('p', { domain: 'none' })).toEqual([])
  })

  it('records outcomes and lists them newest first', async () => {
    const { clock, memory } = await setup()
    const email = await memory.lessons.appendOutcome('p', { domain: 'email', score: 0.2, lesson: 'wrong recipient', source: { sessionId: 's1' } })
    clock.advance(1)
    const code = await memory.lessons.appendOutcome('p', { domain: 'code', score: 1, lesson: 'tests passed' })
    expect(code).toEqual({ seq: expect.any(Number), projectId: 'p', domain: 'code', score: 1, lesson: 'tests passed', at: clock.now() })
    expect(code.seq).toBeGreaterThan(email.seq)
    expect((await memory.lessons.outcomes('p')).items).toEqual([code, email])
    expect((await memory.lessons.outcomes('p')).items.map((o) => o.lesson)).toEqual(['tests passed', 'wrong recipient'])
    expect(await memory.lessons.outcomes('p', { domain: 'email' })).toEqual({
      items: [{ seq: email.seq, projectId: 'p', domain: 'email', score: 0.2, lesson: 'wrong recipient', source: { sessionId: 's1' }, at: clock.now() - 1 }],
    })
    await expect(memory.lessons.appendOutcome('nope', { domain: 'd', score: 1, lesson: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.lessons.appendOutcome('p', { domain: 'd', score: NaN, lesson: 'x' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.lessons.appendOutcome('p', { domain: 'd', score: 1, lesson: 'x', source: { tool: '' } })).rejects.toMatchObject({
      code: 'invalid_input',
    })
  })

  it('rejects bad input without writing; emits lessons changes including evictions', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['lessons'] }, (b) => seen.push(...b))
    await expect(memory.lessons.create('p', 'd', '  ')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.lessons.create('p', '', 'x')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.lessons.create('p', 'd', 'x'.repeat(2001))).rejects.toMatchObject({ code: 'limit_exceeded' })
    await expect(memory.lessons.create('missing', 'd', 'x')).rejects.toMatchObject({ code: 'not_found' })
    expect(seen).toEqual([])
    for (let i = 0; i < 11; i++) await memory.lessons.create('p', 'd', `r${i}`)
    expect(seen.at(-1)).toEqual({ kind: 'lessons', op: 'delete', id: 'd:r0', projectId: 'p', origin: 'local' })
    expect(seen.at(-2)).toEqual({ kind: 'lessons', op: 'put', id: 'd:r10', projectId: 'p', origin: 'local' })
  })
})
