import type { AtRestCipher } from '@engram/core/internal'
import { IndexeddbPersistence } from 'y-indexeddb'
import * as Y from 'yjs'
import { type EncryptedDocPersistence, openEncryptedDocPersistence } from './encrypted-persistence.js'

/** A document (a project's or a session's) kept in IndexedDB. */
export interface DocPersistence {
  /** Resolves once the stored document is loaded into the Y.Doc. */
  whenLoaded(): Promise<void>
  /** Resolves once every update made before this call is committed to IndexedDB. */
  whenPersisted(): Promise<void>
  /**
   * Replaces every stored update with the document's current state, so content
   * deleted from the document (garbage-collected by Yjs) is gone from disk too.
   */
  compact(): Promise<void>
  destroy(): void
}

/** A persistence that follows the store's at-rest encryption. */
export interface SealablePersistence extends DocPersistence {
  /**
   * Brings the stored document in line with the store: sealed with the current key once the
   * store is encrypted at rest (a plain copy is re-written sealed and erased), else nothing.
   */
  reseal(): Promise<void>
}

/** Persistence that keeps nothing (for `persistence: false`). */
export const noPersistence: DocPersistence = { whenLoaded: async () => {}, whenPersisted: async () => {}, compact: async () => {}, destroy() {} }

/**
 * Keeps `doc` in IndexedDB through y-indexeddb (the global `indexedDB`) while
 * the store is plain; once it is encrypted at rest (`cipherOf` returns its
 * cipher: at open, or when `enable` starts and {@link SealablePersistence.reseal}
 * is called), as sealed updates (encrypted-persistence.ts), the plain copy
 * erased. y-indexeddb stores each update in its own readwrite transaction as
 * the update happens; IndexedDB runs a later transaction over the same store
 * only after earlier readwrite ones finished, so an empty read transaction
 * opened now completes only after every update issued before it is durable.
 */
export function openDocPersistence(
  name: string,
  doc: Y.Doc,
  cipherOf: () => AtRestCipher | undefined,
  onError?: (error: unknown) => void,
): SealablePersistence {
  const cipher = cipherOf()
  let current: DocPersistence | EncryptedDocPersistence = cipher ? openEncryptedDocPersistence(name, doc, cipher, { onError }) : openPlainPersistence(name, doc)
  let sealed = cipher !== undefined
  let loaded = current.whenLoaded()
  return {
    whenLoaded: () => loaded,
    whenPersisted: () => current.whenPersisted(),
    compact: () => current.compact(),
    async reseal() {
      if (sealed) return (current as EncryptedDocPersistence).reseal()
      const now = cipherOf()
      if (!now) return
      // From plain to sealed: y-indexeddb stops (its database closes), the sealed copy reads it and erases it.
      const plain = current as PlainPersistence
      sealed = true
      const after = loaded.then(
        () => plain.close(),
        () => plain.close(),
      )
      current = openEncryptedDocPersistence(name, doc, now, { after, onError })
      loaded = current.whenLoaded()
      await loaded
    },
    destroy: () => current.destroy(),
  }
}

interface PlainPersistence extends DocPersistence {
  /** Stops persisting and resolves once the database is closed. */
  close(): Promise<void>
}

function openPlainPersistence(name: string, doc: Y.Doc): PlainPersistence {
  const persistence = new IndexeddbPersistence(name, doc)
  return {
    whenLoaded: async () => {
      await persistence.whenSynced
    },
    whenPersisted() {
      const db = persistence.db
      if (db === null) return persistence.whenSynced.then(() => undefined)
      return new Promise<void>((resolve, reject) => {
        let tx: IDBTransaction
        try {
          tx = db.transaction(['updates'], 'readonly')
          tx.objectStore('updates').count()
        } catch (error) {
          reject(error)
          return
        }
        tx.oncomplete = () => resolve()
        tx.onerror = () => reject(tx.error)
        tx.onabort = () => reject(tx.error)
      })
    },
    async compact() {
      await persistence.whenSynced
      const db = persistence.db
      if (db === null) return
      // One readwrite transaction: y-indexeddb's own update writes queue before or after it, never between.
      const state = Y.encodeStateAsUpdate(doc)
      await new Promise<void>((resolve, reject) => {
        const tx = db.transaction(['updates'], 'readwrite')
        const store = tx.objectStore('updates')
        store.clear()
        store.add(state)
        tx.oncomplete = () => resolve()
        tx.onerror = () => reject(tx.error)
        tx.onabort = () => reject(tx.error)
      })
    },
    close: () => persistence.destroy(),
    destroy: () => void persistence.destroy(),
  }
}
