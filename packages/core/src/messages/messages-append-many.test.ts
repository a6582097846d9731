import { Dexie } from 'dexie'
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { MemoryError } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
  } catch (e) {
    return e instanceof MemoryError ? `${e.code}: ${e.message}` : 'not a MemoryError'
  }
  return undefined
}

describe('messages.appendMany', () => {
  it('appends in order with gap-free seqs after earlier messages, all searchable', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    await memory.messages.append('s', { role: 'user', content: 'first' })
    const batch = Array.from({ length: 2500 }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      content: `message ${i} about ${i % 7 === 0 ? 'lanterns' : 'rivers'}`,
    }))
    const written = await memory.messages.appendMany('s', batch)
    expect(written.map((m) => m.seq)).toEqual(batch.map((_, i) => i + 2))
    expect((await memory.messages.append('s', { role: 'user', content: 'next' })).seq).toBe(2502)
    expect((await memory.messages.tail('s', 3)).map((m) => m.content)).toEqual(['message 2498 about rivers', 'message 2499 about lanterns', 'next'])
    const hits = await memory.search('p', 'lanterns', { limit: 1000 })
    // Every message that holds the word is found (search may add turns next to the best hits).
    expect(hits.filter((h) => h.text.includes('lanterns'))).toHaveLength(Math.ceil(2500 / 7))
    memory.close()
  })

  it('a batch merged as it is written keeps its terms in blocks only, and stays searchable after reopening', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    await memory.messages.append('s', { role: 'user', content: 'lanterns before the batch' })
    const batch = Array.from({ length: 2100 }, (_, i) => ({ role: 'user' as const, content: `note ${i} ${i % 5 === 0 ? 'lanterns lanterns' : 'rivers'}` }))
    await memory.messages.appendMany('s', batch)
    const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
    const rows = await raw.table('textDocs').toArray()
    raw.close()
    // One row for the message before the batch, a few batch rows of a few hundred documents for the batch.
    const batches = rows.filter((r) => r.m !== undefined)
    expect(rows.length - batches.length).toBe(1)
    expect(batches.length).toBeGreaterThan(1)
    expect(batches.length).toBeLessThan(30)
    expect(batches.reduce((sum, r) => sum + r.m, 0)).toBe(2100)
    // Consecutive numbers, each batch keyed by its last document.
    const sorted = [...batches].sort((a, b) => a.n - b.n)
    sorted.forEach((r, i) => {
      if (i > 0) expect(r.n - r.m).toBe(sorted[i - 1].n)
    })
    // The single message before the batch was merged with it; every batch row is stored without terms.
    expect(batches.every((r) => r.t === '' && r.f === undefined && r.te === undefined)).toBe(true)
    const count = async (m: typeof memory) => (await m.search('p', 'lanterns', { limit: 1000 })).filter((h) => h.text.includes('lanterns')).length
    expect(await count(memory)).toBe(1 + 420)
    memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId } as Record<string, unknown>)
    expect(await count(reopened)).toBe(1 + 420)
    await reopened.messages.append('s', { role: 'assistant', content: 'lanterns after the batch' })
    expect(await count(reopened)).toBe(2 + 420)
    // Term frequencies of the batch reached the blocks: a doubled word outranks a single one of equal length.
    const [best] = await reopened.search('p', 'lanterns', { limit: 1 })
    expect(best!.text).toMatch(/^note \d+ lanterns lanterns$/)
    reopened.close()
  })

  it('checks every message first: one bad message writes nothing', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    const bad = [
      { role: 'user', content: 'fine' },
      { role: 'robot', content: 'not a role' },
    ] as never
    expect(await codeOf(memory.messages.appendMany('s', bad))).toMatch(/^invalid_input: .*messages\[1\]\.role/)
    expect(await codeOf(memory.messages.appendMany('s', [] as never))).toMatch(/^invalid_input/)
    expect(await codeOf(memory.messages.appendMany('s', 'x' as never))).toMatch(/^invalid_input/)
    expect(await codeOf(memory.messages.appendMany('nope', [{ role: 'user', content: 'x' }]))).toMatch(/^not_found/)
    expect(await memory.messages.tail('s', 10)).toEqual([])
    expect(await memory.search('p', 'fine')).toEqual([])
    // Nothing reached the index tables either.
    const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
    expect(await raw.table('textDocs').count()).toBe(0)
    raw.close()
    memory.close()
  })
})
