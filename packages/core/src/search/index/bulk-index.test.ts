import { Dexie } from 'dexie'
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import type { Dump } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

/** A tiny deterministic generator (failures replay with the printed seed). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

const BASE = ['river', 'garden', 'budget', 'flight', 'cello', 'pixel', 'oslo', 'porto', 'tomato', 'basil', 'meeting', 'dentist', 'zebra', 'lantern']
/** Enough words that a query matches a few dozen documents: rankings are compared whole, never cut inside a tie. */
const WORDS = BASE.flatMap((a) => ['', 'ka', 'lo', 'mi', 'ren', 'ta', 'vo', 'shi', 'pa', 'dor', 'el', 'un', 'ri'].map((b) => `${a}${b}`))
type Store = Awaited<ReturnType<typeof openTestMemory>>
type Row = Record<string, unknown>
const view = (hits: { kind: string; text: string; score: number }[]) =>
  hits
    .map((h) => `${h.score.toFixed(9)} ${h.kind} ${h.text}`)
    .sort()
    .reverse()

async function compare(stores: Store[], rand: () => number, projects = ['p1', 'p2']): Promise<void> {
  for (let i = 0; i < 14; i++) {
    const query = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')
    const session = i % 5 === 4 ? { sessionId: 's1' } : {}
    const results = await Promise.all(stores.map((s) => s.search(projects[i % projects.length]!, query, { limit: 1000, ...session })))
    for (const result of results.slice(1)) expect(view(result), query).toEqual(view(results[0]!))
  }
}

async function rawTables(store: Store): Promise<Dexie> {
  return new Dexie(`engram:test:${store.userId}`, { indexedDB: store.indexedDB, IDBKeyRange }).open()
}

/**
 * Bulk writes go to posting segments in their own transaction; the same
 * writes to a store that never merges stay in the unmerged tail. Both stores must answer every query alike, through edits, deletes,
 * purges, a scoped import replace and a cold reopen.
 */
describe('bulk-written documents in posting segments', () => {
  it('answer as the same documents written in small batches, through edits, deletes, purges and a reopen', async () => {
    const seed = Number(process.env.BULK_SEED ?? 99)
    console.log(`bulk index seed ${seed}`)
    const rand = lcg(seed)
    const bulk = await openTestMemory({ purgeAt: 8, inlineMergeAt: 256, mergeDelayMs: Infinity } as Record<string, unknown>)
    const small = await openTestMemory({ inlineMergeAt: Infinity, mergeAt: Infinity, mergeDelayMs: Infinity } as Record<string, unknown>)
    // Batches stored unmerged, then merged in the background (into segments or blocks) while edits and deletes go on.
    let merges = 0
    const later = await openTestMemory({
      purgeAt: 8,
      inlineMergeAt: Infinity,
      mergeAt: 200,
      segmentAt: 400,
      mergeDelayMs: Infinity,
      onMerge: () => void merges++,
    } as Record<string, unknown>)
    const stores = [bulk, small, later]
    for (const s of stores) {
      await s.projects.create({ name: 'P', id: 'p1' })
      await s.projects.create({ name: 'Q', id: 'p2' })
      await s.sessions.create('p1', { id: 's1' })
      await s.sessions.create('p2', { id: 's2' })
    }
    const sentence = () => Array.from({ length: 2 + Math.floor(rand() * 9) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')
    const ids: string[][] = [[], [], []]
    for (let round = 0; round < 5; round++) {
      const session = round % 2 ? 's2' : 's1'
      const batch = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: sentence() }))
      for (const [i, s] of stores.entries()) ids[i]!.push(...(await s.messages.appendMany(session, batch)).map((m) => m.id))
      // Small writes between bulk ones: a fact, an exchange.
      const fact = sentence()
      for (const s of stores) await s.facts.set('p1', `k${round}`, fact)
      const [a, b] = [sentence(), sentence()]
      for (const [i, s] of stores.entries()) ids[i]!.push(...(await s.messages.appendExchange('s1', a, b)).map((m) => m.id))
      // Edit and delete bulk-written messages (the same positions in both stores).
      for (let k = 0; k < 6; k++) {
        const at = Math.floor(rand() * ids[0]!.length)
        const text = sentence()
        const del = rand() < 0.5
        for (const [i, s] of stores.entries()) {
          const id = ids[i]![at]!
          if (id === '') continue
          if (del) await s.messages.delete(id)
          else await s.messages.edit(id, { content: text })
        }
        if (del) for (const list of ids) list[at] = ''
      }
      await compare(stores, rand)
    }
    // Enough deletes for a purge (purgeAt, and a sixteenth of a project), then a bulk write merges:
    // dead documents leave the segments and the statistics.
    for (let k = 0; k < 260; k++) {
      const at = Math.floor(rand() * ids[0]!.length)
      if (ids[0]![at] === '') continue
      for (const [i, s] of stores.entries()) await s.messages.delete(ids[i]![at]!)
      for (const list of ids) list[at] = ''
    }
    await compare(stores, rand)
    const last = Array.from({ length: 300 }, () => ({ role: 'user' as const, content: sentence() }))
    for (const s of stores) await s.messages.appendMany('s1', last)
    await compare(stores, rand)
    expect(merges).toBeGreaterThan(0)

    // Segments stay few (about log2 of the batches) and dead documents were purged from them.
    const raw = await rawTables(bulk)
    const corpus = await raw.table('textCorpus').toArray()
    expect(corpus.some((row) => (row.s ?? []).length > 0)).toBe(true)
    for (const row of corpus) expect((row.s ?? []).length).toBeLessThanOrEqual(3)
    expect(await raw.table('textDocs').where('x').equals(1).count()).toBeLessThan(8)
    expect(await raw.table('textBlocks').count()).toBe(0)
    raw.close()

    // Cold: a reopened store reads the segments from disk.
    const reopened = await openTestMemory({ indexedDB: bulk.indexedDB, userId: bulk.userId, mergeDelayMs: Infinity } as Record<string, unknown>)
    bulk.close()
    await compare([reopened, small, later], rand)

    // A scoped replace of p2 drops its segments and writes the dump's messages as a new one.
    const dumps = await Promise.all([reopened.export('p2'), small.export('p2')])
    const rewrite = (d: Dump): Dump => ({
      ...d,
      tables: {
        ...d.tables,
        messages: ((d.tables.messages ?? []) as Row[]).map((m, i) => ({ ...m, content: i % 2 ? 'porto cello' : 'oslo tomato basil zebra' })),
      },
    })
    await reopened.import(rewrite(dumps[0]!), { mode: 'replace' })
    await small.import(rewrite(dumps[1]!), { mode: 'replace' })
    await compare([reopened, small], rand)
    expect(await reopened.search('p2', 'pixel')).toEqual([])
    const zebras = await reopened.search('p2', 'zebra', { limit: 1000 })
    expect(zebras.length).toBeGreaterThan(0)
    expect(new Set(zebras.map((h) => h.text))).toEqual(new Set(['oslo tomato basil zebra', 'porto cello']))
    reopened.close()
    small.close()
  })
})

describe('a background merge of many documents', () => {
  it('writes them as a segment, and a merge of a few into blocks', async () => {
    let merged: () => void = () => {}
    const memory = await openTestMemory({ mergeDelayMs: 0, onMerge: () => merged() } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.sessions.create('p1', { id: 's1' })
    const settled = () => new Promise<void>((resolve) => (merged = resolve))
    let done = settled()
    await memory.messages.appendMany(
      's1',
      Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: i === 3 ? 'the lantern by the harbor' : `note ${i} on the garden` })),
    )
    await done
    const raw = await rawTables(memory)
    expect(await raw.table('textSegs').count()).toBeGreaterThan(0)
    expect(await raw.table('textBlocks').count()).toBe(0)
    done = settled()
    await memory.messages.append('s1', { role: 'user', content: 'another lantern' })
    await done
    expect(await raw.table('textBlocks').count()).toBeGreaterThan(0)
    raw.close()
    const hits = (await memory.search('p1', 'lantern')).filter((h) => h.text.includes('lantern')).map((h) => h.text)
    expect(hits.sort()).toEqual(['another lantern', 'the lantern by the harbor'])
    expect((await memory.search('p1', 'garden', { limit: 500 })).filter((h) => h.text.includes('garden'))).toHaveLength(299)
    memory.close()
  })
})

describe('documents of a segment after a reopen', () => {
  it('leave out one edited or deleted in an earlier session before a merge recorded it', async () => {
    // A merge starts once 100 documents wait, and writes them as a segment; nothing else merges.
    let merged: () => void = () => {}
    const done = new Promise<void>((resolve) => (merged = resolve))
    const options = { segmentAt: 50, mergeAt: 100, mergeDelayMs: Infinity } as Record<string, unknown>
    const memory = await openTestMemory({ ...options, onMerge: () => merged() } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.sessions.create('p1', { id: 's1' })
    const written = await memory.messages.appendMany(
      's1',
      Array.from({ length: 100 }, (_, i) => ({
        role: 'user' as const,
        content: `${i % 10 === 0 ? 'walrus ' : i === 55 ? 'yak ' : ''}note ${i} about the orchard`,
      })),
    )
    await done
    const raw = await rawTables(memory)
    expect(await raw.table('textSegDocs').count()).toBe(1)
    raw.close()
    // Search once so the directories are loaded; then edit and delete with no merge to record it.
    expect((await memory.search('p1', 'walrus', { limit: 50 })).filter((h) => h.text.includes('walrus'))).toHaveLength(10)
    await memory.messages.edit(written[0]!.id, { content: 'a plain note' })
    await memory.messages.delete(written[10]!.id)
    const here = (await memory.search('p1', 'walrus', { limit: 50 })).filter((h) => h.text.includes('walrus'))
    expect(here).toHaveLength(8)
    memory.close()
    // A new session of the store knows nothing of those two removals but what is on disk.
    const reopened = await openTestMemory({ ...options, indexedDB: memory.indexedDB, userId: memory.userId })
    // A first search that meets neither: the segment's document list loads in the background after it.
    expect((await reopened.search('p1', 'yak')).filter((h) => h.text.includes('yak'))).toHaveLength(1)
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      const hits = await reopened.search('p1', 'walrus', { limit: 50 })
      // The edited message no longer says "walrus" (nor is it next to a turn that does).
      expect(hits.map((h) => h.id)).not.toContain(written[0]!.id)
      const walrus = hits.filter((h) => h.text.includes('walrus'))
      expect(walrus.map((h) => h.id).sort(), `search ${i + 1}`).toEqual(here.map((h) => h.id).sort())
    }
    const plain = (await reopened.search('p1', 'plain')).filter((h) => h.text.includes('plain'))
    expect(plain.map((h) => h.id)).toEqual([written[0]!.id])
    reopened.close()
  })
})

describe('segments written before directories (schema 5)', () => {
  it('are read by key range, and a compaction gives them a directory', async () => {
    // A merge starts once 60 documents wait and writes them as a segment; nothing else merges.
    let merged: () => void = () => {}
    const merge = () => new Promise<void>((resolve) => (merged = resolve))
    const options = { segmentAt: 50, mergeAt: 60, mergeDelayMs: Infinity, onMerge: () => merged() } as Record<string, unknown>
    const memory = await openTestMemory(options)
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.sessions.create('p1', { id: 's1' })
    const batch = (word: string) =>
      Array.from({ length: 60 }, (_, i) => ({ role: 'user' as const, content: `${i % 6 === 0 ? `${word} ` : ''}line ${i} of the log` }))
    let done = merge()
    const first = await memory.messages.appendMany('s1', batch('heron'))
    await done
    memory.close()
    // As a version 5 store left it: segments without directories or document lists.
    const raw = await rawTables(memory)
    expect(await raw.table('textDirs').count()).toBe(1)
    await raw.table('textDirs').clear()
    await raw.table('textSegDocs').clear()
    raw.close()
    const reopened = await openTestMemory({ ...options, indexedDB: memory.indexedDB, userId: memory.userId })
    const holding = async (word: string) =>
      (await reopened.search('p1', word, { limit: 100 }))
        .filter((h) => h.text.includes(word))
        .map((h) => h.id)
        .sort()
    const ids = (list: { id: string; content: string }[], word: string) =>
      list
        .filter((m) => m.content.includes(word))
        .map((m) => m.id)
        .sort()
    expect(await holding('heron')).toEqual(ids(first, 'heron'))
    // A second segment as large compacts with the old one: the result has a directory of both, and no document list.
    done = merge()
    const second = await reopened.messages.appendMany('s1', batch('egret'))
    await done
    const check = await rawTables(reopened)
    expect(await check.table('textDirs').count()).toBe(1)
    expect(await check.table('textSegDocs').count()).toBe(0)
    check.close()
    expect(await holding('heron')).toEqual(ids(first, 'heron'))
    expect(await holding('egret')).toEqual(ids(second, 'egret'))
    reopened.close()
  })
})
