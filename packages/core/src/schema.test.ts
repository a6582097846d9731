import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { EngramDb, SCHEMA_V1 } from './schema.js'

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
 * Version 1 is the first schema, so there is no bump yet; its entry checks that a
 * database any Dexie client wrote with the v1 stores opens with EngramDb unchanged.
 * The next bump adds `{ from: 1, stores: SCHEMA_V1, seed, check }` here.
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
    },
    check: async (db) => {
      expect(await db.sessions.get('s')).toMatchObject({ lastSeq: 1 })
      expect(await db.messages.where('[sessionId+seq]').equals(['s', 1]).first()).toMatchObject({ content: 'hi' })
      expect(await db.summaries.where('[projectId+kind+createdAt]').between(['p', 'project', 0], ['p', 'project', 10]).count()).toBe(1)
      expect(await db.projects.get('p')).toMatchObject({ name: 'P' })
    },
  },
]

describe('schema', () => {
  it('creates every table of SCHEMA_V1 with its key and indexes', async () => {
    const indexedDB = new IDBFactory()
    const db = new EngramDb('engram:schema-test:fresh', { indexedDB, IDBKeyRange })
    await db.open()
    db.close()
    const { stores } = await readShape(indexedDB, 'engram:schema-test:fresh')
    expect(Object.keys(stores).sort()).toEqual(Object.keys(SCHEMA_V1).sort())
    for (const [table, spec] of Object.entries(SCHEMA_V1)) expect({ table, ...stores[table] }).toEqual({ table, ...parseSpec(spec) })
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
    expect(Object.keys(stores).sort()).toEqual(Object.keys(SCHEMA_V1).sort())
  })
})
