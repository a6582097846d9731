import { MOVE_META_KEY, MOVED_META_KEY } from './move-marks.js'
/*
 * Where a store's rows live. A store is created in `engram:<appId>:<userId>`;
 * `enable` and `rekey` end by moving it into a fresh database named after the
 * key generation, `engram@<generation>:<appId>:<userId>`, and deleting the old
 * one, so the rows the run superseded (plaintext, or sealed with retired keys)
 * leave the disk with it (database-move.ts). No store's first name starts with
 * `engram@`, so the two forms never meet. The current database is the one with
 * the highest generation that the move finished (its `meta` holds
 * {@link MOVED_META_KEY}), else the first name; any other is left over from a
 * move cut short, and is deleted when the store opens.
 */

export { MOVE_META_KEY, MOVED_META_KEY }

/** The name of the database a store is moved into at key generation `generation`. */
export function movedDatabaseName(appId: string, userId: string, generation: number): string {
  return `engram@${generation}:${appId}:${userId}`
}

/** The key generation in a moved database's name, when `name` is one of this app and user. */
export function generationOfName(name: string, appId: string, userId: string): number | undefined {
  const match = /^engram@([1-9][0-9]{0,8}):/.exec(name)
  if (!match || name.slice(match[0].length) !== `${appId}:${userId}`) return undefined
  return Number(match[1])
}

/**
 * The database a store opens: `first` (`engram:<appId>:<userId>`), or the moved
 * database that is current; databases a cut-short move left behind are deleted.
 * Without `indexedDB.databases()` stores are never moved (database-move.ts), so
 * `first` is the answer there.
 */
export async function currentDatabaseName(factory: IDBFactory | undefined, first: string, appId: string, userId: string): Promise<string> {
  if (typeof factory?.databases !== 'function') return first
  const names = (await factory.databases()).flatMap((d) => (d.name === undefined ? [] : [d.name]))
  const moved = names.flatMap((name) => {
    const generation = generationOfName(name, appId, userId)
    return generation === undefined ? [] : [{ name, generation }]
  })
  if (moved.length === 0) return first
  const { settleMoves } = await import('./database-move-recovery.js')
  return settleMoves(factory, first, names.includes(first), moved)
}
