import type { AtRestCipher } from '@engram/core/internal'
import * as Y from 'yjs'
import type { DocPersistence } from './idb-persistence.js'

/*
 * The local copy of a project document for a store encrypted at rest. Same
 * database layout as y-indexeddb (one database per document, an auto-numbered
 * `updates` store), but each stored update is sealed with the store's data key
 * (`{ s: sealed }`), bound to the database name. A document kept plain by
 * y-indexeddb before the store was encrypted, or sealed with an older key
 * generation (before a `rekey`), is re-written sealed with the current key as
 * soon as it is loaded; a finished rekey re-writes open documents at once.
 */

/** Stored updates past which the document is compacted into one (y-indexeddb trims at 500 too). */
const COMPACT_AT = 500

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
  return request(req)
}

/** Keeps `doc` in IndexedDB (the global `indexedDB`) as sealed updates. */
export function openEncryptedDocPersistence(name: string, doc: Y.Doc, cipher: AtRestCipher): DocPersistence {
  const context = `engram-sync/at-rest/v1\u0000${name}`
  let destroyed = false
  let stored = 0
  const origin = { persistence: name }
  const seal = (update: Uint8Array): SealedUpdate => ({ s: cipher.seal(update, context) })

  const ready: Promise<IDBDatabase> = openDatabase(name)
  const loaded: Promise<void> = ready.then(async (db) => {
    const tx = db.transaction(['updates'], 'readonly')
    const values = (await request(tx.objectStore('updates').getAll())) as Array<Uint8Array | SealedUpdate>
    let rewrite = false
    const updates: Uint8Array[] = []
    for (const value of values) {
      if (value instanceof Uint8Array) {
        // Written plain by y-indexeddb before the store was encrypted.
        updates.push(value)
        rewrite = true
      } else {
        updates.push(cipher.open(value.s, context))
        if (cipher.generationOf(value.s) !== cipher.generation()) rewrite = true
      }
    }
    stored = values.length
    Y.transact(
      doc,
      () => {
        for (const update of updates) Y.applyUpdate(doc, update)
      },
      origin,
      false,
    )
    if (rewrite) await compactNow(db)
  })

  async function compactNow(db: IDBDatabase): Promise<void> {
    const tx = db.transaction(['updates'], 'readwrite')
    const store = tx.objectStore('updates')
    store.clear()
    store.add(seal(Y.encodeStateAsUpdate(doc)))
    await done(tx)
    stored = 1
  }

  const onUpdate = (update: Uint8Array, from: unknown): void => {
    if (from === origin || destroyed) return
    void ready
      .then((db) => {
        if (destroyed) return
        // One readwrite transaction per update, in order (IndexedDB runs them one after the other).
        const tx = db.transaction(['updates'], 'readwrite')
        tx.objectStore('updates').add(seal(update))
        stored++
        if (stored > COMPACT_AT) void loaded.then(() => (destroyed ? undefined : compactNow(db))).catch(() => {})
      })
      .catch(() => {})
  }
  doc.on('update', onUpdate)
  const offKeys = cipher.onKeysChanged(() => {
    void Promise.all([ready, loaded])
      .then(([db]) => (destroyed ? undefined : compactNow(db)))
      .catch(() => {})
  })

  return {
    whenLoaded: () => loaded,
    async whenPersisted() {
      const db = await ready
      const tx = db.transaction(['updates'], 'readonly')
      tx.objectStore('updates').count()
      await done(tx)
    },
    async compact() {
      await loaded
      await compactNow(await ready)
    },
    destroy() {
      destroyed = true
      doc.off('update', onUpdate)
      offKeys()
      void ready.then((db) => db.close()).catch(() => {})
    },
  }
}
