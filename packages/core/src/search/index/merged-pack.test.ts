import { Dexie } from 'dexie'
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'
import type { StoredDocRow } from './doc-batches.js'
import { MERGED_MARK_KEY } from './index-rows.js'

type Store = Awaited<ReturnType<typeof openTestMemory>>

async function rawTables(store: Store): Promise<Dexie> {
  return new Dexie(`engram:test:${store.userId}`, { indexedDB: store.indexedDB, IDBKeyRange }).open()
}

/** Texts of the hits of `query` that hold `word`. */
async function holding(memory: Pick<Store, 'search'>, query: string, word: string): Promise<string[]> {
  return (await memory.search('p1', query, { limit: 100 }))
    .filter((h) => h.text.includes(word))
    .map((h) => h.text)
    .sort()
}

describe('messages appended one by one, once merged', () => {
  it('are packed into batch rows without terms, and stay found, editable and deletable, after a reopen too', async () => {
    let merged: () => void = () => {}
    const memory = await openTestMemory({ mergeDelayMs: 0, onMerge: () => merged() } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p1' })
    const sessions = [await memory.sessions.create('p1'), await memory.sessions.create('p1')]
    const settled = new Promise<void>((resolve) => (merged = resolve))
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      const content = i === 7 ? 'the lantern by the harbor' : i === 12 ? 'a lantern in the attic' : `note ${i} about the garden`
      ids.push((await memory.messages.append(sessions[i % 2]!.id, { role: i % 2 ? 'assistant' : 'user', content })).id)
      if (i % 10 === 9) await memory.facts.set('p1', `fact${i}`, `garden fact ${i}`)
    }
    await settled
    // Every merge the writes started has finished once the merged mark reaches the last document row.
    const raw = await rawTables(memory)
    const mergedAll = async () => {
      const mark = ((await raw.table('meta').get(MERGED_MARK_KEY)) as { value?: number } | undefined)?.value ?? 0
      const last = ((await raw.table('textDocs').orderBy(':id').last()) as { n?: number } | undefined)?.n ?? 0
      return mark >= last
    }
    while (!(await mergedAll())) await new Promise<void>((resolve) => (merged = resolve))

    const rows = (await raw.table('textDocs').toArray()) as StoredDocRow[]
    // (Ids are keyed hashes in an encrypted store: the rows are told apart by shape.)
    const batches = rows.filter((r) => 'm' in r)
    const singles = rows.filter((r) => !('m' in r) && r.x === undefined)
    expect(batches.length).toBeGreaterThan(0)
    expect(batches.every((b) => b.t === '')).toBe(true)
    // 40 messages and 4 facts; facts keep rows of their own, so at least 4 single rows stay.
    expect(batches.reduce((n, b) => n + ('m' in b ? b.m : 0), 0) + singles.length).toBe(44)
    expect(singles.length).toBeGreaterThanOrEqual(4)
    expect(singles.length).toBeLessThan(44 - 2 * batches.length + 1)
    raw.close()

    expect(await holding(memory, 'lantern', 'lantern')).toEqual(['a lantern in the attic', 'the lantern by the harbor'])
    expect(await holding(memory, 'garden', 'garden')).toHaveLength(38 + 4)
    await memory.messages.edit(ids[7]!, { content: 'the lighthouse by the harbor' })
    await memory.messages.delete(ids[12]!)
    expect(await holding(memory, 'lantern', 'lantern')).toEqual([])
    expect(await holding(memory, 'lighthouse', 'lighthouse')).toEqual(['the lighthouse by the harbor'])
    memory.close()

    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId, mergeDelayMs: Infinity } as Record<string, unknown>)
    expect(await holding(reopened, 'lantern', 'lantern')).toEqual([])
    expect(await holding(reopened, 'lighthouse harbor', 'lighthouse')).toEqual(['the lighthouse by the harbor'])
    expect(await holding(reopened, 'garden', 'garden')).toHaveLength(38 + 4)
    reopened.close()
  })
})
