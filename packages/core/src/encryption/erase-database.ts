/*
 * Deleting an IndexedDB database so that its rows leave the disk, not only the
 * API. Chromium keeps every database of an origin in one LevelDB: a delete
 * there removes the database's key range and compacts that range, but LevelDB
 * flushes the records still in its write buffer (and log) only while it
 * compacts, into a level the compaction does not visit, and removes the files
 * a compaction replaced only on a later flush. So a throwaway database is
 * created and deleted before (its compaction flushes the write buffer, so the
 * deleted rows are in tables the next compaction reaches) and after (its
 * flushes let LevelDB remove the replaced files). Erases run one at a time. What the OS does with the
 * freed disk blocks is beyond reach (docs/encryption.md). Other engines
 * (Firefox's SQLite, fake-indexeddb) are only deleted from.
 */

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
}

/** Resolves once `name` is deleted (after every open connection to it closed). */
export function deleteDatabase(factory: IDBFactory, name: string): Promise<void> {
  return request(factory.deleteDatabase(name)).then(() => undefined)
}

/** Creates, fills with one row and deletes a database nobody else uses: LevelDB flushes its write buffer on the way. */
async function throwaway(factory: IDBFactory): Promise<void> {
  const name = `engram-erase:${Array.from(globalThis.crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('')}`
  const open = factory.open(name, 1)
  open.onupgradeneeded = () => open.result.createObjectStore('x').put(0, 0)
  const db = await request(open)
  db.close()
  await deleteDatabase(factory, name)
}

/**
 * Deletes the databases `names` (their connections must be closed or closing) so their
 * rows leave the profile's files, not only the API. Not for apps: `@engram/sync` erases
 * the stored documents it re-seals with it.
 */
export function eraseDatabases(factory: IDBFactory, names: readonly string[]): Promise<void> {
  if (names.length === 0) return Promise.resolve()
  const run = erasing.then(async () => {
    await throwaway(factory)
    for (const name of names) await deleteDatabase(factory, name)
    // Twice: the first flush may come while the delete's compaction still runs (seen on a loaded
    // machine: one row's index entries stayed in the files); the second removes what it replaced.
    await throwaway(factory)
    await throwaway(factory)
  })
  erasing = run.catch(() => {})
  return run
}

/**
 * Erases of this context, one after the other: a store's move and sync's re-seal erase at the
 * same time, and one's flush between another's delete and its compaction would leave rows behind.
 */
let erasing: Promise<void> = Promise.resolve()
