import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { createMemory } from '../compose/create-memory.js'
import type { Memory } from '../compose/memory.js'
import { factsModule } from '../facts/facts-module.js'
import { openMemory } from '../compose/open-memory.js'
import { isHandle } from '../runtime/task-handle.js'
import { isHlc } from '../store/hlc.js'
import {
  BATCHES_VERSION,
  CONVERSATIONS_VERSION,
  DIRECTORIES_VERSION,
  EngramDb,
  ID_HASHES_VERSION,
  SCHEMA,
  SCHEMA_BATCHES,
  SCHEMA_CONVERSATIONS,
  SCHEMA_DIRECTORIES,
  SCHEMA_ID_HASHES,
  SCHEMA_MODULES,
  SCHEMA_SEGMENTS,
  SCHEMA_V1,
  SCHEMA_V2,
  SEGMENTS_VERSION,
} from './schema.js'
import { englishAnalyzer } from '../search/analysis/analyzer.js'
import { batchRowsOf } from '../search/index/batch-pack.js'
import { docsById, type StoredDocRow } from '../search/index/doc-batches.js'
import { mergeTail, type MergeTables } from '../search/index/merger.js'
import { docRowOf } from '../search/index/text-index.js'

/*
 * Schema tests. Every Dexie version bump adds one entry to MIGRATIONS: the
 * schema of the version before it, rows written with it, and what the new
 * version must show for them. `writtenBy` builds such a database with a plain
 * Dexie instance (no Engram code), then EngramDb opens and upgrades it.
 */

/** One index as IndexedDB stores it. */
interface IndexShape {
  name: string
  keyPath: string | string[]
  unique: boolean
  multiEntry: boolean
}
/** One object store as IndexedDB stores it. */
interface StoreShape {
  keyPath: string | string[] | null
  autoIncrement: boolean
  indexes: IndexShape[]
}

/** Parses a Dexie store spec (`'++seq, &docId, [a+b], *tags'`) into the IndexedDB shape it creates. */
function parseSpec(spec: string): StoreShape {
  const parts = spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const [primary = '', ...rest] = parts
  const path = (s: string): string | string[] => (s.startsWith('[') ? s.slice(1, -1).split('+') : s)
  const bare = primary.replace(/^(\+\+|&)/, '')
  return {
    keyPath: bare === '' ? null : path(bare),
    autoIncrement: primary.startsWith('++'),
    indexes: rest
      .map((p) => {
        const name = p.replace(/^[&*]/, '')
        return { name, keyPath: path(name), unique: p.startsWith('&'), multiEntry: p.startsWith('*') }
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
  }
}

/** Reads the real object stores and indexes of a database, bypassing Dexie. */
async function readShape(indexedDB: IDBFactory, name: string): Promise<{ version: number; stores: Record<string, StoreShape> }> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(name)
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
  const stores: Record<string, StoreShape> = {}
  const names = [...db.objectStoreNames]
  if (names.length > 0) {
    const tx = db.transaction(names, 'readonly')
    for (const storeName of names) {
      const store = tx.objectStore(storeName)
      stores[storeName] = {
        keyPath: store.keyPath as string | string[] | null,
        autoIncrement: store.autoIncrement,
        indexes: [...store.indexNames]
          .map((n) => {
            const idx = store.index(n)
            return { name: n, keyPath: idx.keyPath as string | string[], unique: idx.unique, multiEntry: idx.multiEntry }
          })
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
      }
    }
  }
  const version = db.version
  db.close()
  return { version, stores }
}

/**
 * Writes a database the way an older Engram did: a plain Dexie instance
 * declaring `stores` as version `version`, with `seed` run against it; then
 * closes it and reopens the same database with the current EngramDb.
 */
async function writtenBy(
  version: number,
  stores: Record<string, string>,
  seed: (db: Dexie) => Promise<void>,
): Promise<{ db: EngramDb; indexedDB: IDBFactory; name: string }> {
  const indexedDB = new IDBFactory()
  const name = `engram:schema-test:v${version}`
  const old = new Dexie(name, { indexedDB, IDBKeyRange })
  old.version(version).stores(stores)
  await old.open()
  await seed(old)
  old.close()
  const db = new EngramDb(name, { indexedDB, IDBKeyRange })
  await db.open()
  return { db, indexedDB, name }
}

/** One schema bump: the previous version's stores, rows written with it and the check after the upgrade. */
interface Migration {
  from: number
  stores: Record<string, string>
  seed: (db: Dexie) => Promise<void>
  check: (db: EngramDb) => Promise<void>
}

/**
 * Version 2 replaced the search index's tables (searchDocs, corpusStats) by the
 * compact layout (textDocs, textBlocks, textCorpus) and rebuilds it from the
 * records in the upgrade. The seed writes rows the way version 1 did, its old
 * index rows included. Version 3 (MODULES_VERSION): tasks get unique handles
 * and the modules' new tables exist.
 */
const MIGRATIONS: Migration[] = [
  {
    from: 1,
    stores: SCHEMA_V1,
    seed: async (db) => {
      await db.table('projects').put({ id: 'p', name: 'P', sync: { enabled: false }, createdAt: 1, updatedAt: 1 })
      await db.table('sessions').put({ id: 's', projectId: 'p', status: 'active', startedAt: 1, lastActiveAt: 2, lastSeq: 1 })
      await db.table('messages').put({ id: 'm', sessionId: 's', projectId: 'p', seq: 1, role: 'user', content: 'hi', tokens: 1, createdAt: 2 })
      await db.table('summaries').put({ id: 'x', projectId: 'p', kind: 'project', text: 't', createdAt: 3, hlc: 'h' })
      // Version 1's index of the message (one document row, one entry per term) and its corpus row.
      await db.table('searchDocs').put({ docId: 'message:m', len: 1, at: 2, sid: 's', projectId: 'p', terms: ['p\u0001hi\u000210001'], tfs: [1] })
      await db.table('corpusStats').put({ projectId: 'p', docs: 1, length: 1 })
      for (const id of ['t1', 't2', 't3']) {
        await db
          .table('tasks')
          .put({ id, projectId: 'p', description: id, dueAt: 5, repeat: null, status: 'pending', retries: 0, createdAt: 1, norm: id, slotAt: 5, anchorDay: 1 })
      }
    },
    check: async (db) => {
      expect(await db.sessions.get('s')).toMatchObject({ lastSeq: 1 })
      expect(await db.messages.where('[sessionId+seq]').equals(['s', 1]).first()).toMatchObject({ content: 'hi' })
      expect(await db.summaries.where('[projectId+kind+createdAt]').between(['p', 'project', 0], ['p', 'project', 10]).count()).toBe(1)
      expect(await db.projects.get('p')).toMatchObject({ name: 'P' })
      const tasks = await db.table('tasks').toArray()
      expect(tasks.map((t) => t.description)).toEqual(['t1', 't2', 't3'])
      expect(tasks.every((t) => isHandle(t.handle))).toBe(true)
      expect(new Set(tasks.map((t) => t.handle)).size).toBe(3)
      expect(await db.table('tasks').where('handle').equals(tasks[0].handle).count()).toBe(1)
    },
  },
  {
    // Version 4 (CONVERSATIONS_VERSION): messages get a merged order key that keeps their seq order, sessions a stamp, outbox entries their document.
    from: 3,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES },
    seed: async (db) => {
      await db.table('projects').put({ id: 'p', name: 'P', sync: { enabled: true }, createdAt: 1, updatedAt: 1 })
      await db.table('sessions').put({ id: 's', projectId: 'p', status: 'active', startedAt: 1000, lastActiveAt: 2000, lastSeq: 3 })
      // Same createdAt for seq 2 and 3, an earlier one for seq 1: the key must keep seq order.
      await db.table('messages').bulkPut([
        { id: 'm3', sessionId: 's', projectId: 'p', seq: 3, role: 'assistant', content: 'c', tokens: 1, createdAt: 2000 },
        { id: 'm1', sessionId: 's', projectId: 'p', seq: 1, role: 'user', content: 'a', tokens: 1, createdAt: 1500 },
        { id: 'm2', sessionId: 's', projectId: 'p', seq: 2, role: 'user', content: 'b', tokens: 1, createdAt: 2000 },
      ])
      await db.table('outbox').add({ kind: 'facts', projectId: 'p', id: 'f', op: 'put', hlc: '0000000001000.00000.dev' })
    },
    check: async (db) => {
      const ordered = await db.messages.where('[sessionId+at]').between(['s', ''], ['s', '\uffff']).toArray()
      expect(ordered.map((m) => m.id)).toEqual(['m1', 'm2', 'm3'])
      expect(ordered.every((m) => isHlc(m.hlc))).toBe(true)
      expect(isHlc((await db.sessions.get('s'))?.hlc)).toBe(true)
      expect(await db.outbox.where('[projectId+doc]').equals(['p', '']).count()).toBe(1)
      // A row written without an order key after the upgrade (an older dump) gets one too.
      await db.messages.add({ id: 'm4', sessionId: 's', projectId: 'p', seq: 4, role: 'user', content: 'd', tokens: 1, createdAt: 2000 })
      expect((await db.messages.where('[sessionId+at]').between(['s', ''], ['s', '\uffff']).last())?.id).toBe('m4')
    },
  },
  {
    // Version 5 (SEGMENTS_VERSION): an empty table of posting segments; the index rows stay as they are.
    from: CONVERSATIONS_VERSION,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS },
    seed: async (db) => {
      await db.table('textCorpus').put({ p: 'p', q: 1, docs: 1, length: 2 })
      await db.table('textDocs').add({ q: 1, d: 'message:m', a: 1, l: 2, t: '', k: 0 })
      await db.table('textBlocks').put({ q: 1, w: 'hi', b: 0, s: 0, c: 1, z: 1, p: Uint8Array.of(1, 4, 2) })
    },
    check: async (db) => {
      expect(await db.table('textSegs').count()).toBe(0)
      expect(await db.table('textBlocks').get([1, 'hi', 0])).toMatchObject({ c: 1, z: 1 })
      expect(await db.table('textDocs').where('d').equals('message:m').count()).toBe(1)
      expect(await db.table('textCorpus').get('p')).toEqual({ p: 'p', q: 1, docs: 1, length: 2 })
    },
  },
  {
    // Version 6 (DIRECTORIES_VERSION): empty tables of segment directories and document lists; segments stay as they are.
    from: SEGMENTS_VERSION,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS, ...SCHEMA_SEGMENTS },
    seed: async (db) => {
      await db.table('textCorpus').put({ p: 'p', q: 1, docs: 1, length: 2, s: [{ g: 1, c: 1 }] })
      await db.table('textSegs').put({ q: 1, g: 1, w: 'hi', t: 'hi', c: Uint32Array.of(1), o: Uint32Array.of(3), p: Uint8Array.of(1, 4, 2) })
    },
    check: async (db) => {
      expect(await db.table('textDirs').count()).toBe(0)
      expect(await db.table('textSegDocs').count()).toBe(0)
      expect(await db.table('textSegs').get([1, 1, 'hi'])).toMatchObject({ t: 'hi' })
      expect((await db.table('textCorpus').get('p'))?.s).toEqual([{ g: 1, c: 1 }])
    },
  },
  {
    // Version 7 (BATCHES_VERSION): the id index takes every member of a batch row; single rows are found by id as before.
    from: DIRECTORIES_VERSION,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS, ...SCHEMA_SEGMENTS, ...SCHEMA_DIRECTORIES },
    seed: async (db) => {
      await db
        .table('messages')
        .add({ id: 'm1', sessionId: 's', projectId: 'p', seq: 1, role: 'user', content: 'a', tokens: 1, createdAt: 1, at: '0000000000001.00000.dev' })
      await db.table('textCorpus').put({ p: 'p', q: 1, docs: 2, length: 4 })
      await db.table('textDocs').bulkAdd([
        { q: 1, d: 'message:m1', a: 1, l: 2, t: '', k: 0 },
        { q: 1, d: 'fact:p/k', a: 2, l: 2, t: '', k: 1 },
        { q: 1, a: 0, l: 2, t: '', k: 0, x: 1 },
      ])
    },
    check: async (db) => {
      expect(await db.table('textDocs').where('d').equals('message:m1').count()).toBe(1)
      expect(await db.table('textDocs').where('d').equals('fact:p/k').primaryKeys()).toEqual([2])
      expect(await db.table('textDocs').where('x').equals(1).primaryKeys()).toEqual([3])
      // Single rows are in no batch count; a batch row added now is.
      expect(await db.table('textDocs').where('[q+c]').between([1, 0], [1, Infinity]).count()).toBe(0)
      await db.table('textDocs').add({ n: 6, q: 1, m: 2, c: 2, d: ['message:a', 'message:b'], a: [3, 4], l: [1, 1], k: [0, 0], t: '' })
      // Messages lose their project index: they are read by session.
      expect(await db.table('messages').where('[sessionId+at]').between(['s', ''], ['s', '\uffff']).primaryKeys()).toEqual(['m1'])
      expect(await db.table('textDocs').where('d').equals('message:b').primaryKeys()).toEqual([6])
      expect(await db.table('textDocs').where('[q+c]').between([1, 0], [1, Infinity]).keys()).toEqual([[1, 2]])
    },
  },
  {
    // Version 8 (ID_HASHES_VERSION): batches written from now on are found by the hashes of their ids; older batches by their ids.
    from: BATCHES_VERSION,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS, ...SCHEMA_SEGMENTS, ...SCHEMA_DIRECTORIES, ...SCHEMA_BATCHES },
    seed: async (db) => {
      await db.table('textDocs').bulkAdd([
        { n: 3, q: 1, m: 3, c: 3, d: ['message:a', 'message:b', 'message:c'], a: [1, 2, 3], l: [1, 1, 1], k: [0, 0, 0], t: '' },
        { q: 1, d: 'fact:p/k', a: 4, l: 2, t: '', k: 1 },
      ])
    },
    check: async (db) => {
      const table = db.table('textDocs') as Dexie.Table<StoredDocRow, number>
      expect((await docsById(table, 'message:b')).map((row) => [row.n, row.d])).toEqual([[2, 'message:b']])
      expect((await docsById(table, 'fact:p/k')).map((row) => row.n)).toEqual([4])
      const [batch] = batchRowsOf(
        ['message:x', 'message:y'].map((d) => ({ q: 1, d, a: 5, l: 1, t: '', k: 0 })),
        5,
      )
      await table.add(batch!)
      expect(await table.where('d').equals('message:y').count()).toBe(0)
      expect((await docsById(table, 'message:y')).map((row) => [row.n, row.d])).toEqual([[6, 'message:y']])
      expect(await docsById(table, 'message:z')).toEqual([])
    },
  },
  {
    // Version 9 (ID_PREFIXES_VERSION): a batch of ids with a long shared prefix is found by it; batches found by hashes stay so.
    from: ID_HASHES_VERSION,
    stores: { ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS, ...SCHEMA_SEGMENTS, ...SCHEMA_DIRECTORIES, ...SCHEMA_BATCHES, ...SCHEMA_ID_HASHES },
    seed: async (db) => {
      const [batch] = batchRowsOf(
        ['message:a', 'message:b'].map((d) => ({ q: 1, d, a: 1, l: 1, t: '', k: 0 })),
        1,
      )
      await db.table('textDocs').add(batch!)
    },
    check: async (db) => {
      const table = db.table('textDocs') as Dexie.Table<StoredDocRow, number>
      expect((await docsById(table, 'message:b')).map((row) => [row.n, row.d])).toEqual([[2, 'message:b']])
      const ids = ['message:0190aaaa-bbbb-7001', 'message:0190aaaa-bbbb-7002']
      const [batch] = batchRowsOf(
        ids.map((d) => ({ q: 1, d, a: 5, l: 1, t: '', k: 0 })),
        3,
      )
      expect(batch).toMatchObject({ p: 'message:0190aaaa-bbbb-70' })
      await table.add(batch!)
      expect(await table.where('p').equals('message:0190aaaa-bbbb-70').primaryKeys()).toEqual([4])
      expect((await docsById(table, ids[1]!)).map((row) => [row.n, row.d])).toEqual([[4, ids[1]]])
    },
  },
]

describe('schema', () => {
  it('creates every table of the current schema with its key and indexes', async () => {
    const indexedDB = new IDBFactory()
    const db = new EngramDb('engram:schema-test:fresh', { indexedDB, IDBKeyRange })
    await db.open()
    db.close()
    const { stores } = await readShape(indexedDB, 'engram:schema-test:fresh')
    expect(Object.keys(stores).sort()).toEqual(Object.keys(SCHEMA).sort())
    for (const [table, spec] of Object.entries(SCHEMA)) expect({ table, ...stores[table] }).toEqual({ table, ...parseSpec(spec) })
  })

  it('parses specs the way Dexie does', () => {
    expect(parseSpec('++seq, &docId, [a+b], *tags')).toEqual({
      keyPath: 'seq',
      autoIncrement: true,
      indexes: [
        { name: '[a+b]', keyPath: ['a', 'b'], unique: false, multiEntry: false },
        { name: 'docId', keyPath: 'docId', unique: true, multiEntry: false },
        { name: 'tags', keyPath: 'tags', unique: false, multiEntry: true },
      ],
    })
  })

  it.each(MIGRATIONS)('opens a database written by version $from and keeps its rows', async (m) => {
    const { db, indexedDB, name } = await writtenBy(m.from, m.stores, m.seed)
    try {
      await m.check(db)
    } finally {
      db.close()
    }
    const { stores } = await readShape(indexedDB, name)
    expect(Object.keys(stores).sort()).toEqual(Object.keys(SCHEMA).sort())
    for (const [table, spec] of Object.entries(SCHEMA)) expect({ table, ...stores[table] }).toEqual({ table, ...parseSpec(spec) })
  })

  it('opens a store written with the version 1 schema: every memory readable, every kind searchable', async () => {
    const indexedDB = await writeVersion1Store()
    const memory = await openMemory({ appId: 'schema-test', userId: 'u1', indexedDB, IDBKeyRange })
    try {
      await expectUpgraded(memory)
    } finally {
      await memory.close()
    }
  })

  it('opens a store written with version 4 (index in posting blocks only): its documents stay searchable, edited and removed beside bulk-written segments', async () => {
    const indexedDB = await writeVersion4Store()
    const memory = await openMemory({ appId: 'schema-test', userId: 'u4', indexedDB, IDBKeyRange, inlineMergeAt: 256 } as Parameters<typeof openMemory>[0])
    try {
      expect((await memory.search('p', 'bicycle')).map((h) => h.id)[0]).toBe('m1')
      // A bulk write goes to a posting segment, beside the blocks written by version 4.
      const written = await memory.messages.appendMany(
        's',
        Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: i === 7 ? 'A second bicycle, a red one' : `note ${i} about the harbour` })),
      )
      const raw = await new Dexie('engram:schema-test:u4', { indexedDB, IDBKeyRange }).open()
      expect(await raw.table('textBlocks').count()).toBeGreaterThan(0)
      expect(await raw.table('textSegs').count()).toBeGreaterThan(0)
      raw.close()
      // Hits that hold the word (turns next to them may join as neighbours).
      const holding = async (word: string) => (await memory.search('p', word, { limit: 500 })).filter((h) => h.text.includes(word)).map((h) => h.id)
      expect(new Set(await holding('bicycle'))).toEqual(new Set(['m1', written[7]!.id]))
      await memory.messages.edit('m1', { content: 'Where did I park the scooter?' })
      await memory.messages.delete(written[7]!.id)
      expect(await memory.search('p', 'bicycle')).toEqual([])
      expect((await memory.search('p', 'scooter')).map((h) => h.id)[0]).toBe('m1')
      expect((await holding('harbour')).length).toBe(299)
    } finally {
      await memory.close()
    }
  })

  it('an upgrade made by a store without the search module leaves the index to the first store that has it', async () => {
    const indexedDB = await writeVersion1Store()
    const factsOnly = await createMemory({ appId: 'schema-test', userId: 'u1', indexedDB, IDBKeyRange, modules: [factsModule()] })
    expect(await factsOnly.facts.get('p', 'pet')).toMatchObject({ value: 'a greyhound called Pixel' })
    await factsOnly.close()
    const memory = await openMemory({ appId: 'schema-test', userId: 'u1', indexedDB, IDBKeyRange })
    try {
      await expectUpgraded(memory)
    } finally {
      await memory.close()
    }
  })
})

/** What the store written by version 1 holds after the upgrade: every memory readable, every kind searchable. */
async function expectUpgraded(memory: Memory): Promise<void> {
  expect((await memory.messages.tail('s', 10)).map((m) => m.content)).toEqual(['Where did I park the bicycle?', 'You parked it behind the library.'])
  expect(await memory.facts.get('p', 'pet')).toMatchObject({ value: 'a greyhound called Pixel' })
  // The best hit is the message itself (the turn after it may follow as its neighbour).
  expect((await memory.search('p', 'bicycle')).map((h) => h.id)[0]).toBe('m1')
  expect((await memory.search('p', 'library')).map((h) => h.id)).toEqual(expect.arrayContaining(['a', 'm2']))
  expect((await memory.search('p', 'greyhound')).map((h) => [h.kind, h.id])).toEqual([['fact', 'f1']])
  expect((await memory.search('p', 'porto cycling')).map((h) => h.kind)).toEqual(['summary'])
  // Written after the upgrade: indexed beside the rebuilt documents.
  const m3 = await memory.messages.append('s', { role: 'user', content: 'And the bicycle lock code?' })
  expect((await memory.search('p', 'bicycle')).map((h) => h.id)).toEqual(expect.arrayContaining([m3.id, 'm1']))
}

/** Writes the store of user `u4` the way version 4 did: records, and their index merged into posting blocks. */
async function writeVersion4Store(): Promise<IDBFactory> {
  const indexedDB = new IDBFactory()
  const old = new Dexie('engram:schema-test:u4', { indexedDB, IDBKeyRange })
  old.version(CONVERSATIONS_VERSION).stores({ ...SCHEMA_V2, ...SCHEMA_MODULES, ...SCHEMA_CONVERSATIONS })
  await old.open()
  const T = Date.UTC(2026, 0, 1)
  await old.table('meta').put({ key: 'deviceId', value: 'dev0000000000004' })
  await old.table('projects').bulkPut([
    { id: 'p', name: 'Home', sync: { enabled: false }, createdAt: T, updatedAt: T },
    { id: 'user', name: 'User', sync: { enabled: false }, createdAt: T, updatedAt: T },
  ])
  await old
    .table('sessions')
    .put({ id: 's', projectId: 'p', status: 'active', startedAt: T, lastActiveAt: T + 2, lastSeq: 2, hlc: `${T}.00000.dev0000000000004` })
  const messages = [
    { id: 'm1', seq: 1, role: 'user', content: 'Where did I park the bicycle?' },
    { id: 'm2', seq: 2, role: 'assistant', content: 'You parked it behind the library.' },
  ].map((m) => ({ ...m, sessionId: 's', projectId: 'p', tokens: 7, createdAt: T + m.seq }))
  await old.table('messages').bulkPut(messages)
  await old.table('textCorpus').put({ p: 'p', q: 1, docs: 0, length: 0 })
  const rows = messages.map((m) =>
    docRowOf(englishAnalyzer, { docId: `message:${m.id}`, kind: 'message', projectId: 'p', sessionId: 's', text: m.content, createdAt: m.createdAt }, 1),
  )
  await old.table('textDocs').bulkAdd(rows)
  const t = {
    textDocs: old.table('textDocs'),
    textBlocks: old.table('textBlocks'),
    textCorpus: old.table('textCorpus'),
    meta: old.table('meta'),
  } as MergeTables
  await old.transaction('rw', ['textDocs', 'textBlocks', 'textCorpus', 'meta'], () => mergeTail(t))
  old.close()
  return indexedDB
}

/** Writes the store of user `u1` the way version 1 did (records and old index rows) and returns its factory. */
async function writeVersion1Store(): Promise<IDBFactory> {
  const indexedDB = new IDBFactory()
  const name = 'engram:schema-test:u1'
  const old = new Dexie(name, { indexedDB, IDBKeyRange })
  old.version(1).stores(SCHEMA_V1)
  await old.open()
  const T = Date.UTC(2026, 0, 1)
  await old.table('meta').put({ key: 'deviceId', value: 'dev0000000000001' })
  await old.table('projects').bulkPut([
    { id: 'p', name: 'Home', sync: { enabled: false }, createdAt: T, updatedAt: T },
    { id: 'user', name: 'User', sync: { enabled: false }, createdAt: T, updatedAt: T },
  ])
  await old.table('sessions').put({ id: 's', projectId: 'p', status: 'active', startedAt: T, lastActiveAt: T + 2, lastSeq: 2 })
  await old.table('messages').bulkPut([
    { id: 'm1', sessionId: 's', projectId: 'p', seq: 1, role: 'user', content: 'Where did I park the bicycle?', tokens: 7, createdAt: T + 1 },
    { id: 'm2', sessionId: 's', projectId: 'p', seq: 2, role: 'assistant', content: 'You parked it behind the library.', tokens: 7, createdAt: T + 2 },
  ])
  const hlc = `${String(T).padStart(13, '0')}.00000.dev0000000000001`
  await old.table('facts').bulkPut([
    {
      id: 'f1',
      projectId: 'p',
      key: 'pet',
      value: 'a greyhound called Pixel',
      confidence: 1,
      tags: [],
      tagKeys: [],
      createdAt: T,
      updatedAt: T,
      version: 1,
      hlc,
    },
    {
      id: 'f2',
      projectId: 'p',
      key: 'old',
      value: 'a removed greyhound note',
      confidence: 1,
      tags: [],
      tagKeys: [],
      createdAt: T,
      updatedAt: T,
      version: 2,
      hlc,
      deletedAt: T + 5,
    },
  ])
  await old
    .table('factVersions')
    .put({ projectId: 'p', key: 'pet', version: 1, value: 'a greyhound called Pixel', validFrom: T, deleted: false, confidence: 1, hlc, origin: 'local' })
  await old.table('summaries').put({ id: 'x', projectId: 'p', kind: 'project', text: 'Planning a cycling trip to Porto', createdAt: T + 3, hlc })
  await old.table('passages').put({ id: 'a', projectId: 'p', text: 'The library closes at nine on weekdays', tags: [], createdAt: T + 4 })
  old.close()
  return indexedDB
}
