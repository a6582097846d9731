import { MOVED_META_KEY } from './move-marks.js'
import { eraseDatabases } from './erase-database.js'

/*
 * Opening a store that moved databases (database-names.ts): which one is
 * current, and the removal of the others. Loaded only when a moved database exists.
 */

/** Whether the database `name` holds the mark of a finished move (opened raw, read, closed). */
async function moveFinished(factory: IDBFactory, name: string): Promise<boolean> {
  const db = await new Promise<IDBDatabase | undefined>((resolve, reject) => {
    const req = factory.open(name)
    // Gone since it was listed: do not create it.
    req.onupgradeneeded = () => req.transaction?.abort()
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => (req.error?.name === 'AbortError' ? resolve(undefined) : reject(req.error))
  })
  if (!db) return false
  try {
    if (!db.objectStoreNames.contains('meta')) return false
    const row = await new Promise<unknown>((resolve, reject) => {
      const get = db.transaction('meta', 'readonly').objectStore('meta').get(MOVED_META_KEY)
      get.onsuccess = () => resolve(get.result)
      get.onerror = () => reject(get.error)
    })
    return row !== undefined
  } finally {
    db.close()
  }
}

/**
 * The current database among `first` (when it exists) and the moved ones: the finished move
 * of the highest generation; every other is deleted (a source a move finished with, or a
 * copy a move did not finish, which the next run makes again).
 */
export async function settleMoves(
  factory: IDBFactory,
  first: string,
  firstExists: boolean,
  moved: ReadonlyArray<{ name: string; generation: number }>,
): Promise<string> {
  const byGeneration = [...moved].sort((a, b) => b.generation - a.generation)
  let current = first
  for (const candidate of byGeneration) {
    if (await moveFinished(factory, candidate.name)) {
      current = candidate.name
      break
    }
  }
  const stale = [...(firstExists ? [first] : []), ...moved.map((m) => m.name)].filter((name) => name !== current)
  await eraseDatabases(factory, stale)
  return current
}
