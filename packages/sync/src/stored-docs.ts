import type { EncryptionStatus, SyncableMemory } from '@engram/core'
import { atRestCipherOf } from '@engram/core/internal'
import * as Y from 'yjs'
import { docDatabases, openEncryptedDocPersistence, parseDocDatabase, sealedDocName } from './encrypted-persistence.js'
import { type DocPersistence, openDocPersistence, type SealablePersistence } from './idb-persistence.js'

/*
 * The local copies of one sync engine's documents, kept in line with the
 * store's at-rest encryption. Every persistence opened here follows the store:
 * when `enable` starts (the store gets keys) a plain copy is re-written sealed
 * and erased, and when a run changes the key generation every sealed copy is
 * re-written with the new key. Documents not loaded now (sessions beyond the
 * eager ones, projects that stopped syncing) are swept: every database of the
 * origin that holds one of this store's documents (by name: the project's
 * document, or one of its sessions') under an older generation, or plain, is
 * loaded and re-written. The sweep runs when sync starts and after each change
 * of key; a document already current costs nothing but its name.
 */

/** The local copies of a sync engine's documents. */
export interface StoredDocs {
  /** Opens the persistence of document `name` into `doc`. */
  open(name: string, doc: Y.Doc): DocPersistence
  /** Stops following the store (the persistences themselves stop with their mirrors). */
  close(): Promise<void>
}

/** What the stored documents need from the sync engine. */
export interface StoredDocsDeps {
  readonly memory: SyncableMemory
  /** The name of a project's document (its sessions' are `<name>:<sessionId>`). */
  docName(projectId: string): string
  onError(error: unknown): void
}

/** Creates the stored documents of one sync engine (with IndexedDB persistence on). */
export function createStoredDocs(deps: StoredDocsDeps): StoredDocs {
  const live = new Map<string, SealablePersistence>()
  let closed = false
  let sweeping: Promise<void> | undefined
  let again = false
  let seen: Pick<EncryptionStatus, 'state' | 'generation'> | undefined
  const cipherOf = () => atRestCipherOf(deps.memory)

  async function names(): Promise<(name: string) => boolean> {
    const projects = await deps.memory.projects.list({ includeArchived: true })
    const docs = projects.map((p) => deps.docName(p.id))
    return (name) => docs.some((d) => name === d || name.startsWith(`${d}:`))
  }

  /** Re-writes every stored document of this store that is plain or sealed with an older key and not open now. */
  async function sweep(): Promise<void> {
    const cipher = cipherOf()
    if (!cipher || typeof indexedDB.databases !== 'function') return
    const ours = await names()
    const generation = cipher.generation()
    const stale = new Set<string>()
    for (const d of await indexedDB.databases()) {
      if (d.name === undefined) continue
      const { name, generation: stored } = parseDocDatabase(d.name)
      if (stored !== generation && ours(name)) stale.add(name)
    }
    for (const name of stale) {
      if (closed) return
      if (live.has(name)) continue
      // Gone or done since the listing (a mirror opened it meanwhile): nothing to load.
      const found = await docDatabases(name, generation)
      if (found.length === 1 && found[0]!.db === sealedDocName(name, generation)) continue
      const doc = new Y.Doc()
      const persistence = openEncryptedDocPersistence(name, doc, cipher, { onError: deps.onError })
      try {
        await persistence.whenLoaded()
      } finally {
        persistence.destroy()
        doc.destroy()
      }
    }
  }

  function requestSweep(): void {
    if (closed) return
    if (sweeping) {
      again = true
      return
    }
    sweeping = sweep()
      .catch((error: unknown) => {
        if (!closed) deps.onError(error)
      })
      .finally(() => {
        sweeping = undefined
        if (again) {
          again = false
          requestSweep()
        }
      })
  }

  /** The store got keys or changed them: every open copy is re-sealed, then the others. */
  function onEncryption(status: EncryptionStatus): void {
    if (closed || status.state === 'plain') return
    if (seen && seen.state !== 'plain' && seen.generation === status.generation) return
    seen = { state: status.state, generation: status.generation }
    void Promise.all([...live.values()].map((p) => p.reseal().catch((error: unknown) => deps.onError(error)))).then(requestSweep)
  }

  const subscription = deps.memory.encryption.subscribe(onEncryption).catch(() => undefined)
  const atStart = cipherOf()
  seen = atStart ? { state: 'encrypted', generation: atStart.generation() } : { state: 'plain', generation: 0 }
  if (atStart) requestSweep()

  return {
    open(name, doc) {
      const persistence = openDocPersistence(name, doc, cipherOf, deps.onError)
      live.set(name, persistence)
      return {
        ...persistence,
        destroy() {
          if (live.get(name) === persistence) live.delete(name)
          persistence.destroy()
        },
      }
    },
    async close() {
      closed = true
      await (await subscription)?.()
      await sweeping
    },
  }
}
