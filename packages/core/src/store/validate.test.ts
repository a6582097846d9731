import { describe, expect, it } from 'vitest'
import { type Memory, MemoryError } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'
import { checkId } from './validate.js'

const LONE_HIGH = 'bad\uD800id'
const LONE_LOW = 'bad\uDC00id'

/** Runs `call` and returns the MemoryError it rejects with (fails the test on anything else). */
async function refusal(call: () => Promise<unknown>): Promise<MemoryError> {
  try {
    await call()
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(MemoryError)
    return error as MemoryError
  }
  throw new Error('the call did not fail')
}

describe('ids and keys are well-formed Unicode', () => {
  it('checkId refuses lone surrogates, high or low, and keeps pairs', () => {
    for (const bad of [LONE_HIGH, LONE_LOW, '\uD800', 'x\uDFFF', '\uDC00\uD800']) expect(() => checkId('key', bad)).toThrow(/key .*lone surrogate/)
    expect(checkId('key', 'emoji 😀 and 𝄞')).toBe('emoji 😀 and 𝄞')
  })

  it('every id and key of the API refuses a lone surrogate with invalid_input naming the field, and writes nothing', async () => {
    const memory: Memory = await openTestMemory()
    await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    await memory.projects.setSync('p', { messages: true })
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['id', () => memory.projects.create({ id: LONE_HIGH, name: 'x' })],
      ['projectId', () => memory.facts.set(LONE_HIGH, 'k', 1)],
      ['key', () => memory.facts.set('p', LONE_LOW, 1)],
      ['label', () => memory.blocks.set('p', LONE_HIGH, 'v')],
      ['id', () => memory.sessions.create('p', { id: LONE_HIGH })],
      ['tag', () => memory.facts.set('p', 'k', 1, { tags: [LONE_LOW] })],
    ]
    for (const [field, call] of cases) {
      const error = await refusal(call)
      expect(error.code, `${field}: ${error.message}`).toBe('invalid_input')
      expect(error.message).toContain(field)
      expect(error.message).toMatch(/lone surrogate/)
    }
    expect((await memory.projects.list()).map((p) => p.id).sort()).toEqual(['p', 'user'])
    expect((await memory.facts.list('p')).items).toEqual([])
    expect(await memory.blocks.list('p')).toEqual([])
    await memory.close()
  })

  it('openMemory refuses a user id with a lone surrogate', async () => {
    const error = await refusal(() => openTestMemory({ userId: LONE_HIGH }))
    expect(error.code).toBe('invalid_input')
    expect(error.message).toContain('userId')
  })
})
