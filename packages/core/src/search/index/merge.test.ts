import { Dexie } from 'dexie'
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'

/** A tiny deterministic generator (failures replay with the printed seed). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

const WORDS = [
  'river',
  'garden',
  'budget',
  'flight',
  'cello',
  'pixel',
  'oslo',
  'porto',
  'tomato',
  'basil',
  'meeting',
  'dentist',
  'zebra',
  'lantern',
  'harbor',
  'quartz',
]
type Store = Awaited<ReturnType<typeof openTestMemory>>
/** Hits as comparable across two stores (ids differ): kind, text and score, ties in text order. */
const view = (hits: { kind: string; text: string; score: number }[]) =>
  hits
    .map((h) => `${h.score.toFixed(9)} ${h.kind} ${h.text}`)
    .sort()
    .reverse()

/**
 * The same writes go to a store that merges after every write and one that
 * never merges: every query must give the same hits with the same scores, and
 * so must the merged store reopened (cold, from what is on disk).
 */
describe('the merged index answers as the unmerged one', () => {
  it('after appends, replaced and deleted facts, removed passages, summaries and a session of another project', async () => {
    const seed = Number(process.env.MERGE_SEED ?? 1234)
    console.log(`merge equivalence seed ${seed}`)
    const rand = lcg(seed)
    let merges = 0
    let purged = 0
    let onMerge: () => void = () => {}
    const merging = await openTestMemory({
      mergeAt: 1,
      mergeDelayMs: 0,
      purgeAt: 4,
      onMerge: (m: { purged: number }) => {
        merges++
        purged += m.purged
        onMerge()
      },
    } as Record<string, unknown>)
    const tailOnly = await openTestMemory({ mergeAt: Infinity, mergeDelayMs: Infinity } as Record<string, unknown>)
    const stores: Store[] = [merging, tailOnly]
    const sentence = () => Array.from({ length: 2 + Math.floor(rand() * 9) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')
    const passageIds: string[][] = [[], []]
    for (const s of stores) {
      await s.projects.create({ name: 'P', id: 'p1' })
      await s.projects.create({ name: 'Q', id: 'p2' })
    }
    const sessions = await Promise.all(stores.map((s) => s.sessions.create('p1', { id: 's1' })))
    await Promise.all(stores.map((s) => s.sessions.create('p2', { id: 's2' })))
    for (let step = 0; step < 160; step++) {
      const r = rand()
      const a = sentence()
      const b = sentence()
      const key = `k${Math.floor(rand() * 12)}`
      for (const [i, s] of stores.entries()) {
        if (r < 0.45) await s.messages.appendExchange(sessions[i]!.id, a, b)
        else if (r < 0.6) await s.facts.set('p1', key, a)
        else if (r < 0.67) await s.facts.delete('p1', key)
        else if (r < 0.8) passageIds[i]!.push((await s.archive.create('p1', a)).id)
        else if (r < 0.87 && passageIds[i]!.length > 0) await s.archive.delete(passageIds[i]!.shift()!)
        else if (r < 0.93) await s.summaries.create('p1', { kind: 'project', text: a })
        else await s.messages.append('s2', { role: 'user', content: a })
      }
      if (step % 40 === 39) await compare(stores, rand)
    }
    // Wait for the merge that follows the last write, then compare once more, also cold.
    await new Promise<void>((resolve) => {
      onMerge = resolve
      void merging.messages.append(sessions[0]!.id, { role: 'user', content: 'zebra lantern harbor' })
      void tailOnly.messages.append(sessions[1]!.id, { role: 'user', content: 'zebra lantern harbor' })
    })
    expect(merges).toBeGreaterThan(10)
    expect(purged).toBeGreaterThan(0)
    await compare(stores, rand)
    const reopened = await openTestMemory({ indexedDB: merging.indexedDB, userId: merging.userId, mergeAt: Infinity, mergeDelayMs: Infinity } as Record<
      string,
      unknown
    >)
    merging.close()
    await compare([reopened, tailOnly], rand)
    // Blocks hold what was merged, and dead rows were purged down to fewer than purgeAt a project.
    const raw = await new Dexie(`engram:test:${reopened.userId}`, { indexedDB: reopened.indexedDB, IDBKeyRange }).open()
    expect(await raw.table('textBlocks').count()).toBeGreaterThan(0)
    expect(await raw.table('textDocs').where('x').equals(1).count()).toBeLessThan(2 * 4)
    raw.close()
    reopened.close()
    tailOnly.close()
  })
})

describe('a delete writes no marker', () => {
  it('a merged document removed by a store closed before any merge recorded it never comes back', async () => {
    let total = 0
    let bothMerged: () => void = () => {}
    const merged = new Promise<void>((resolve) => (bothMerged = resolve))
    const onMerge = (m: { merged: number }) => {
      total += m.merged
      if (total === 2) bothMerged()
    }
    const a = await openTestMemory({ mergeAt: 1, mergeDelayMs: 0, onMerge } as Record<string, unknown>)
    await a.projects.create({ name: 'P', id: 'p1' })
    const kept = await a.archive.create('p1', 'zebra lantern by the harbor')
    const gone = await a.archive.create('p1', 'zebra quartz in the garden')
    await merged
    a.close()
    const quiet = { indexedDB: a.indexedDB, userId: a.userId, mergeAt: Infinity, mergeDelayMs: Infinity } as Record<string, unknown>
    const b = await openTestMemory(quiet)
    expect(await b.archive.delete(gone.id)).toBe(true)
    b.close()
    const c = await openTestMemory(quiet)
    expect((await c.search('p1', 'zebra')).map((h) => h.id)).toEqual([kept.id])
    expect(await c.search('p1', 'quartz')).toEqual([])
    c.close()
  })
})

async function compare(stores: Store[], rand: () => number): Promise<void> {
  for (let q = 0; q < 12; q++) {
    const query = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')
    const kinds = q % 4 === 3 ? { kinds: ['fact' as const, 'summary' as const] } : {}
    const session = q % 5 === 4 ? { excludeSessionId: 's2' } : q % 5 === 2 ? { sessionId: 's1' } : {}
    const results = await Promise.all(stores.map((s) => s.search(q % 2 ? 'p1' : 'p2', query, { limit: 1000, ...kinds, ...session })))
    expect(view(results[0]!), query).toEqual(view(results[1]!))
  }
}
