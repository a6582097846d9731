import { describe, expect, it } from 'vitest'
import type { Dump } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

type Row = Record<string, unknown>

/** A store with project p1 (and p2 for the scoped case) whose messages all mention zebras. */
async function zebraStore() {
  const memory = await openTestMemory()
  for (const id of ['p1', 'p2']) {
    await memory.projects.create({ name: id, id })
    const s = await memory.sessions.create(id)
    for (let i = 0; i < 6; i++) await memory.messages.appendExchange(s.id, `zebra stripes number ${i}`, `the zebra ${i} runs fast`)
  }
  return memory
}

/** The same dump with every message rewritten (same ids): zebras become giraffes. */
function giraffes(dump: Dump): Dump {
  const messages = ((dump.tables.messages ?? []) as Row[]).map((m, i) => ({
    ...m,
    content: i % 3 === 0 ? `giraffe neck ${i} and more giraffe` : `giraffe ${i}`,
  }))
  return { ...dump, tables: { ...dump.tables, messages } }
}

const view = (hits: { id: string; text: string; score: number }[]) => hits.map((h) => [h.id, h.text, h.score.toFixed(9)])

describe('import replace and the search caches', () => {
  it('a whole-store replace serves only the new corpus, scored as a freshly opened store would', async () => {
    const memory = await zebraStore()
    // Warm every cache: document frequencies, posting lists, corpus statistics.
    expect(await memory.search('p1', 'zebra')).toHaveLength(10)
    expect(await memory.search('p1', 'giraffe')).toEqual([])
    const dump = giraffes(await memory.export())
    await memory.import(dump, { mode: 'replace' })

    expect(await memory.search('p1', 'zebra')).toEqual([])
    expect(await memory.search('p1', 'stripes')).toEqual([])
    const hits = await memory.search('p1', 'giraffe neck', { limit: 20 })
    expect(hits.length).toBeGreaterThan(0)
    for (const h of hits) expect(h.text).toMatch(/giraffe/)

    // Cold caches over the same stored index give the same ranking and scores.
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId } as Record<string, unknown>)
    await memory.close()
    expect(view(await reopened.search('p1', 'giraffe neck', { limit: 20 }))).toEqual(view(hits))
    await reopened.close()
  })

  it('a project-scoped replace drops that project from the caches and keeps the others', async () => {
    const memory = await zebraStore()
    expect(await memory.search('p1', 'zebra')).toHaveLength(10)
    expect(await memory.search('p2', 'zebra')).toHaveLength(10)
    const p2Before = view(await memory.search('p2', 'zebra stripes', { limit: 20 }))
    const dump = giraffes(await memory.export('p1'))
    await memory.import(dump, { mode: 'replace' })

    expect(await memory.search('p1', 'zebra')).toEqual([])
    const hits = await memory.search('p1', 'giraffe neck', { limit: 20 })
    expect(hits.length).toBeGreaterThan(0)
    expect(view(await memory.search('p2', 'zebra stripes', { limit: 20 }))).toEqual(p2Before)

    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId } as Record<string, unknown>)
    await memory.close()
    expect(view(await reopened.search('p1', 'giraffe neck', { limit: 20 }))).toEqual(view(hits))
    expect(view(await reopened.search('p2', 'zebra stripes', { limit: 20 }))).toEqual(p2Before)
    await reopened.close()
  })
})
