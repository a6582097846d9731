import type { AtRestCipher } from '@engram/core/internal'
import { IndexeddbPersistence } from 'y-indexeddb'
import * as Y from 'yjs'
import { openEncryptedDocPersistence } from './encrypted-persistence.js'

/** A project document kept in IndexedDB. */
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

/** Persistence that keeps nothing (for `persistence: false`). */
export const noPersistence: DocPersistence = { whenLoaded: async () => {}, whenPersisted: async () => {}, compact: async () => {}, destroy() {} }

/**
 * Keeps `doc` in IndexedDB through y-indexeddb (the global `indexedDB`); for a
 * store encrypted at rest (`cipher`), as sealed updates instead (encrypted-persistence.ts).
 * y-indexeddb stores each update in its own readwrite transaction as the update
 * happens; IndexedDB runs a later transaction over the same store only after
 * earlier readwrite ones finished, so an empty read transaction opened now
 * completes only after every update issued before it is durable.
 */
export function openDocPersistence(name: string, doc: Y.Doc, cipher?: AtRestCipher): DocPersistence {
  if (cipher) return openEncryptedDocPersistence(name, doc, cipher)
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
    destroy: () => void persistence.destroy(),
  }
}
