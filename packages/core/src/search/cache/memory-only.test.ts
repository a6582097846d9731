import { IDBDatabase } from 'fake-indexeddb'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Memory } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

/*
 * A search whose reads are all cached runs without a transaction (memory-only.ts), and answers
 * exactly what the transactional search answers. Transactions are counted on fake-indexeddb's
 * IDBDatabase.
 */

let transactions = 0
const original = IDBDatabase.prototype.transaction
beforeAll(() => {
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    transactions++
    return original.apply(this, args)
  } as typeof original
})
afterAll(() => {
  IDBDatabase.prototype.transaction = original
})
afterEach(() => {
  transactions = 0
})

const TOPICS = ['kayak', 'violin', 'glacier', 'saffron', 'lantern', 'orchard']
const QUERIES = ['kayak note', 'violin turn 3', 'glacier', 'saffron lantern', 'about the orchard', 'turn 7 of the violin', 'nothing here']

async function warmStore(): Promise<{ memory: Memory; warmed: () => Promise<void>; sessions: string[] }> {
  let resolveWarm: () => void = () => {}
  let warm = new Promise<void>((resolve) => (resolveWarm = resolve))
  const memory = await openTestMemory({ onWarm: () => resolveWarm() } as Record<string, unknown>)
  await memory.projects.create({ name: 'P', id: 'p1' })
  const sessions: string[] = []
  for (const topic of TOPICS) {
    const s = await memory.sessions.create('p1')
    sessions.push(s.id)
    await memory.messages.appendMany(
      s.id,
      Array.from({ length: 12 }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        content: `${topic} note ${i}: about the ${topic} and turn ${i}`,
      })),
    )
  }
  return {
    memory,
    sessions,
    warmed: async () => {
      await warm
      warm = new Promise<void>((resolve) => (resolveWarm = resolve))
    },
  }
}

describe('searching from memory', () => {
  it('answers a warm project without a transaction, with the hits the transactional search gives', async () => {
    const { memory, warmed } = await warmStore()
    const before: unknown[] = []
    // Before the warm each query reads (the first one starts the warm).
    for (const q of QUERIES) before.push(await memory.search('p1', q, { limit: 20 }))
    await warmed()
    // Once more so every query's lists and hits are cached, then counted.
    for (const q of QUERIES) await memory.search('p1', q, { limit: 20 })
    transactions = 0
    const after: unknown[] = []
    for (const q of QUERIES) after.push(await memory.search('p1', q, { limit: 20 }))
    expect(transactions).toBe(0)
    expect(after).toEqual(before)
    // A word the project never held: the directories say so, nothing is read.
    expect(await memory.search('p1', 'zeppelin')).toEqual([])
    expect(transactions).toBe(0)
    await memory.close()
  })

  it('reads again after a write: a new message is found, an edited one shows its new text', async () => {
    const { memory, warmed, sessions } = await warmStore()
    const [hit] = await memory.search('p1', 'glacier turn 3')
    await warmed()
    await memory.search('p1', 'glacier turn 3')
    await memory.messages.edit(hit!.id, { content: 'glacier note 3, rewritten: the ice moved' })
    expect((await memory.search('p1', 'glacier ice moved'))[0]?.text).toBe('glacier note 3, rewritten: the ice moved')
    await memory.messages.append(sessions[0]!, { role: 'user', content: 'a kayak paddle of carbon fibre' })
    expect((await memory.search('p1', 'kayak paddle carbon'))[0]?.text).toBe('a kayak paddle of carbon fibre')
    await memory.close()
  })

  it('keeps validating its arguments and knows an unknown project', async () => {
    const { memory, warmed } = await warmStore()
    await memory.search('p1', 'kayak')
    await warmed()
    await expect(memory.search('p1', 'kayak', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.search('nope', 'kayak')).toEqual([])
    await memory.close()
  })
})
