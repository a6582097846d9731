import { type AtRestCipher, eraseDatabases } from '@engram/core/internal'
import * as Y from 'yjs'
import type { DocPersistence } from './idb-persistence.js'

/*
 * The local copy of a document (a project's or a session's) for a store
 * encrypted at rest. Same layout as y-indexeddb (an auto-numbered `updates`
 * store), but each stored update is sealed with the store's data key
 * (`{ s: sealed }`), bound to the document's name, and the database is named
 * after the key generation: `engram-sealed@<generation>:<name>`.
 *
 * Whatever else holds the document — `<name>` itself (y-indexeddb's plain copy
 * from before the store was encrypted, or a sealed copy of an earlier version)
 * or the database of an older generation (before a `rekey`) — is read too
 * (updates merge, so reading more never hurts), the document is written
 * sealed with the current key into its generation's database, and the others
 * are erased so their bytes leave the disk (`eraseDatabases`). A crash at any
 * point leaves databases whose updates together hold the document: the next
 * load merges them and finishes. The same happens when a `rekey` or `enable`
 * changes the key ({@link EncryptedDocPersistence.reseal}).
 */

/** Stored updates past which the document is compacted into one (y-indexeddb trims at 500 too). */
const COMPACT_AT = 500

/** The database that holds document `name` sealed with key generation `generation`. */
export function sealedDocName(name: string, generation: number): string {
  return `engram-sealed@${generation}:${name}`
}

/** The document and generation of a database name (generation 0: the document's own name). */
export function parseDocDatabase(dbName: string): { name: string; generation: number } {
  const match = /^engram-sealed@([1-9][0-9]{0,8}):/.exec(dbName)
  return match ? { name: dbName.slice(match[0].length), generation: Number(match[1]) } : { name: dbName, generation: 0 }
}

/** A sealed persistence: {@link DocPersistence} and the re-write under the current key. */
export interface EncryptedDocPersistence extends DocPersistence {
  /** Re-writes the stored document sealed with the current key generation, erasing older copies (a no-op when current). */
  reseal(): Promise<void>
}

interface SealedUpdate {
  s: Uint8Array
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve()
    tx.onerror = () => reject(tx.error)
    tx.onabort = () => reject(tx.error)
  })
}

function openDatabase(name: string): Promise<IDBDatabase> {
  const req = indexedDB.open(name)
  req.onupgradeneeded = () => {
    const db = req.result
    if (!db.objectStoreNames.contains('updates')) db.createObjectStore('updates', { autoIncrement: true })
    if (!db.objectStoreNames.contains('custom')) db.createObjectStore('custom')
  }
  return request(req).then((db) => {
    // Someone erases this database (another tab resealing it): let them.
    db.onversionchange = () => db.close()
    return db
  })
}

/** Whether the database `name` exists, without creating it (when `indexedDB.databases()` is missing). */
function exists(name: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name)
    req.onupgradeneeded = () => req.transaction?.abort()
    req.onsuccess = () => {
      req.result.close()
      resolve(true)
    }
    req.onerror = () => (req.error?.name === 'AbortError' ? resolve(false) : reject(req.error))
  })
}

/** The databases that hold document `name`: its own name and any sealed generation up to `generation`. */
export async function docDatabases(name: string, generation: number): Promise<Array<{ db: string; generation: number }>> {
  if (typeof indexedDB.databases === 'function') {
    return (await indexedDB.databases()).flatMap((d) => {
      if (d.name === undefined) return []
      const parsed = parseDocDatabase(d.name)
      return parsed.name === name ? [{ db: d.name, generation: parsed.generation }] : []
    })
  }
  const candidates = [{ db: name, generation: 0 }, ...Array.from({ length: generation }, (_, i) => ({ db: sealedDocName(name, i + 1), generation: i + 1 }))]
  const found = await Promise.all(candidates.map((c) => exists(c.db)))
  return candidates.filter((_, i) => found[i])
}

/** One load or re-write at a time per document, across persistences (a live one and a sweep). */
const locks = new Map<string, Promise<void>>()
function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const before = locks.get(name) ?? Promise.resolve()
  const run = before.then(fn)
  const tail = run.then(
    () => undefined,
    () => undefined,
  )
  locks.set(name, tail)
  void tail.then(() => {
    if (locks.get(name) === tail) locks.delete(name)
  })
  return run
}

/** Options of {@link openEncryptedDocPersistence}. */
export interface EncryptedPersistenceOptions {
  /** Awaited before anything is read (a plain persistence of the document closing). */
  after?: Promise<void>
  /** Called when erasing an older copy fails (the next load tries again). */
  onError?: (error: unknown) => void
}

/** Keeps `doc` in IndexedDB (the global `indexedDB`) as updates sealed with the store's data key. */
export function openEncryptedDocPersistence(
  name: string,
  doc: Y.Doc,
  cipher: AtRestCipher,
  options: EncryptedPersistenceOptions = {},
): EncryptedDocPersistence {
  const context = `engram-sync/at-rest/v1\u0000${name}`
  const origin = { persistence: name }
  let destroyed = false
  /** Where updates are appended; undefined until the stored document is loaded. */
  let target: { db: IDBDatabase; name: string } | undefined
  /** Updates made before the load finished (the load's re-write covers them, else they are appended). */
  let pending: Uint8Array[] = []
  let stored = 0
  /** Loads, re-writes and compactions, one after the other. */
  let work: Promise<void> = Promise.resolve()
  const queue = (fn: () => Promise<void>): Promise<void> => {
    const next = work.then(() => (destroyed ? undefined : fn()))
    work = next.catch(() => {})
    return next
  }
  const seal = (update: Uint8Array): SealedUpdate => ({ s: cipher.seal(update, context) })

  function append(update: Uint8Array): void {
    if (!target) {
      pending.push(update)
      return
    }
    try {
      // One readwrite transaction per update, in order (IndexedDB runs them one after the other).
      const tx = target.db.transaction(['updates'], 'readwrite')
      tx.objectStore('updates').add(seal(update))
    } catch {
      // The connection closed under us (another connection erased the database): write the whole document again.
      target = undefined
      pending.push(update)
      void reseal().catch(() => {})
      return
    }
    stored++
    if (stored > COMPACT_AT) void queue(compactNow).catch(() => {})
  }

  /** Replaces the stored updates by the document's state, in place (older updates of the same key generation). */
  async function compactNow(): Promise<void> {
    if (!target) return
    const tx = target.db.transaction(['updates'], 'readwrite')
    const store = tx.objectStore('updates')
    store.clear()
    store.add(seal(Y.encodeStateAsUpdate(doc)))
    stored = 1
    await done(tx)
  }

  /** Writes the document into the current generation's database, then erases `others`. */
  async function rewrite(others: readonly string[]): Promise<void> {
    const fresh = sealedDocName(name, cipher.generation())
    const db = target?.name === fresh ? target.db : await openDatabase(fresh)
    if (destroyed) {
      if (db !== target?.db) db.close()
      return
    }
    // From this state on, every update goes to `db`, after the state (same store, later transactions).
    const tx = db.transaction(['updates'], 'readwrite')
    const store = tx.objectStore('updates')
    store.clear()
    store.add(seal(Y.encodeStateAsUpdate(doc)))
    const before = target
    target = { db, name: fresh }
    pending = []
    stored = 1
    await done(tx)
    if (before && before.db !== db) before.db.close()
    await eraseDatabases(
      indexedDB,
      others.filter((n) => n !== fresh),
    )
  }

  async function load(): Promise<void> {
    await options.after
    await withLock(name, async () => {
      const generation = cipher.generation()
      const fresh = sealedDocName(name, generation)
      const found = await docDatabases(name, generation)
      const updates: Uint8Array[] = []
      let current = found.length === 1 && found[0]!.db === fresh
      let keep: IDBDatabase | undefined
      for (const { db: dbName } of found) {
        const db = await openDatabase(dbName)
        let values: Array<Uint8Array | SealedUpdate>
        try {
          values = (await request(db.transaction(['updates'], 'readonly').objectStore('updates').getAll())) as Array<Uint8Array | SealedUpdate>
        } finally {
          if (dbName === fresh) keep = db
          else db.close()
        }
        for (const value of values) {
          if (value instanceof Uint8Array) {
            // Written plain by y-indexeddb before the store was encrypted.
            updates.push(value)
            current = false
          } else {
            updates.push(cipher.open(value.s, context))
            if (cipher.generationOf(value.s) !== generation) current = false
          }
        }
        if (dbName === fresh) stored = values.length
      }
      Y.transact(
        doc,
        () => {
          for (const update of updates) Y.applyUpdate(doc, update)
        },
        origin,
        false,
      )
      if (destroyed) return keep?.close()
      if (keep) target = { db: keep, name: fresh }
      if (current && keep) {
        for (const update of pending.splice(0)) append(update)
        return
      }
      await rewrite(found.map((f) => f.db))
    })
  }

  const onUpdate = (update: Uint8Array, from: unknown): void => {
    if (from === origin || destroyed) return
    append(update)
  }
  doc.on('update', onUpdate)

  function reseal(): Promise<void> {
    return queue(() =>
      withLock(name, async () => {
        const found = await docDatabases(name, cipher.generation())
        if (found.length === 1 && found[0]!.db === target?.name && target.name === sealedDocName(name, cipher.generation())) return
        await rewrite(found.map((f) => f.db))
      }),
    )
  }

  const loaded = queue(load)
  const offKeys = cipher.onKeysChanged(() => void reseal().catch(() => {}))

  return {
    whenLoaded: () => loaded,
    async whenPersisted() {
      await work
      if (!target) return
      const tx = target.db.transaction(['updates'], 'readonly')
      tx.objectStore('updates').count()
      await done(tx)
    },
    compact: () => loaded.then(() => queue(compactNow)),
    reseal,
    destroy() {
      destroyed = true
      doc.off('update', onUpdate)
      offKeys()
      void work.then(() => target?.db.close())
    },
  }
}
