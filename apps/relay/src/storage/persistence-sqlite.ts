import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migratedRoomName } from './persistence.js'
import type { CompactResult, RelayStore, StoredRoom, StoredUpdate } from './persistence.js'
import { startSqliteMaintenance } from './sqlite-maintenance.js'
import { RoomDamagedError, isCorruption } from './store-errors.js'

/** How hard SQLite syncs: `normal` survives a killed process, `full` also a power loss. */
export type SqliteSync = 'normal' | 'full'

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  sync?: SqliteSync
  /** Size the write-ahead log is cut back to after each checkpoint (`journal_size_limit`). Default 64 MiB. */
  walLimitBytes?: number
  /** Milliseconds between background checkpoints and space reclaims. Default 1000. */
  maintenanceIntervalMs?: number
}

const pageBytes = 4096

/**
 * Whether better-sqlite3 failed to load its native binding: not built (npm
 * skipped its install script) or built for another Node version.
 */
function isMissingBinding(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown }
  if (typeof message !== 'string') return false
  return message.includes('Could not locate the bindings file') || (code === 'ERR_DLOPEN_FAILED' && message.includes('better_sqlite3'))
}

/**
 * Open the database file, turning a missing native driver into one line that
 * says how to fix it.
 *
 * @throws Error when better-sqlite3 has no native binding for this Node version.
 */
function openDatabase(file: string): Database.Database {
  try {
    return new Database(file)
  } catch (err) {
    if (!isMissingBinding(err)) throw err
    throw new Error(
      `the SQLite driver better-sqlite3 has no native binding for Node ${process.versions.node} (its install script did not run, or ran for another Node version): ` +
        'allow its script and rebuild it where @engram/relay is installed, `npm rebuild better-sqlite3` with "allowScripts": { "better-sqlite3": true } in package.json ' +
        '(global install: `npm rebuild -g better-sqlite3 --allow-scripts=better-sqlite3`), or serve with --store postgres',
      { cause: err },
    )
  }
}

/**
 * Open (or create) the relay's SQLite store in `dir/relay.sqlite`.
 *
 * Writes are synchronous (better-sqlite3) in WAL mode: an update is in the
 * log when `appendMany` resolves, so a relay killed with SIGKILL loses nothing
 * it has acknowledged; `sync: 'full'` also fsyncs each commit (power loss).
 * A worker thread checkpoints the log and truncates it, and returns pages
 * freed by compactions to the file system, so disk use follows the data while
 * the relay runs, not only at shutdown.
 *
 * @throws Error when better-sqlite3 has no native binding (its install script did not run): the message says how to fix it.
 * @example
 * const store = openSqliteStore('./.data/relay')
 */
export function openSqliteStore(dir: string, options: SqliteStoreOptions = {}): RelayStore {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'relay.sqlite')
  const db = openDatabase(file)
  db.pragma(`page_size = ${pageBytes}`)
  // Incremental auto-vacuum must be chosen before the first table exists; an
  // older file is converted once by a full VACUUM.
  if (db.pragma('auto_vacuum', { simple: true }) !== 2) {
    db.pragma('auto_vacuum = INCREMENTAL')
    db.exec('VACUUM')
  }
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`)
  db.pragma('busy_timeout = 5000')
  db.pragma(`journal_size_limit = ${Math.floor(options.walLimitBytes ?? 64 * 1024 * 1024)}`)
  // Checkpoints run on a worker thread, not inside a commit on the event loop.
  db.pragma('wal_autocheckpoint = 0')
  db.exec(`CREATE TABLE IF NOT EXISTS updates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    room TEXT NOT NULL,
    data BLOB NOT NULL
  );
  CREATE INDEX IF NOT EXISTS updates_room_id ON updates (room, id);
  CREATE TABLE IF NOT EXISTS revocations (
    user TEXT PRIMARY KEY,
    revoked_at INTEGER NOT NULL
  );`)

  // Rooms stored before names were encoded segment by segment take their canonical name.
  const renameRoom = db.prepare<[string, string]>('UPDATE updates SET room = ? WHERE room = ?')
  db.transaction(() => {
    for (const { room } of db.prepare<[], { room: string }>('SELECT DISTINCT room FROM updates').all()) {
      const canonical = migratedRoomName(room)
      if (canonical !== room) renameRoom.run(canonical, room)
    }
  })()
  const dropRoom = db.prepare<[string]>('DELETE FROM updates WHERE room = ?')
  const selectRoom = db.prepare<[string], { id: number; data: Buffer }>('SELECT id, data FROM updates WHERE room = ? ORDER BY id')
  const insert = db.prepare<[string, Uint8Array]>('INSERT INTO updates (room, data) VALUES (?, ?)')
  const deleteUpTo = db.prepare<[string, number]>('DELETE FROM updates WHERE room = ? AND id <= ?')
  const selectUsage = db.prepare<[string, string], { room: string; bytes: number }>(
    'SELECT room, sum(length(data)) AS bytes FROM updates WHERE room >= ? AND room < ? GROUP BY room',
  )
  const upsertRevocation = db.prepare<[string, number]>(
    'INSERT INTO revocations (user, revoked_at) VALUES (?, ?) ON CONFLICT (user) DO UPDATE SET revoked_at = max(revoked_at, excluded.revoked_at)',
  )
  const selectRevocations = db.prepare<[], { user: string; revoked_at: number }>('SELECT user, revoked_at FROM revocations')
  const appendTx = db.transaction((entries: ReadonlyArray<StoredUpdate>) => {
    for (const e of entries) insert.run(e.room, e.update)
  })
  const readRoom = (room: string): { rows: Array<{ id: number; data: Buffer }>; room: StoredRoom } => {
    try {
      const rows = selectRoom.all(room)
      let bytes = 0
      const updates = rows.map((r) => {
        bytes += r.data.byteLength
        return new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength)
      })
      return { rows, room: { updates, bytes } }
    } catch (err) {
      throw isCorruption(err) ? new RoomDamagedError(room, err) : err
    }
  }
  const compactTx = db.transaction((room: string, merge: (updates: Uint8Array[]) => Uint8Array): CompactResult => {
    const { rows, room: stored } = readRoom(room)
    const last = rows.at(-1)
    if (rows.length <= 1 || last === undefined) return { bytes: stored.bytes, rows: rows.length }
    const snapshot = merge(stored.updates)
    deleteUpTo.run(room, last.id)
    insert.run(room, snapshot)
    return { bytes: snapshot.byteLength, rows: 1 }
  })
  const maintenance = startSqliteMaintenance(file, {
    intervalMs: options.maintenanceIntervalMs ?? 1000,
    vacuumAbovePages: 64,
    vacuumPagesPerRound: 4096,
  })

  return {
    async load(room) {
      return readRoom(room).room
    },
    async appendMany(entries) {
      appendTx(entries)
    },
    async compact(room, merge) {
      return compactTx(room, merge)
    },
    async drop(room) {
      dropRoom.run(room)
    },
    async usage(user) {
      // Rooms of `user` sort between `user/` and `user0` ('0' follows '/').
      return new Map(selectUsage.all(user + '/', user + '0').map((r) => [r.room, r.bytes]))
    },
    async revoke(user, atMs) {
      upsertRevocation.run(user, Math.floor(atMs))
    },
    async revocations() {
      return new Map(selectRevocations.all().map((r) => [r.user, r.revoked_at]))
    },
    async damagedRooms() {
      const result = db.pragma('quick_check') as Array<{ quick_check: string }>
      if (result.length === 1 && result[0]?.quick_check === 'ok') return []
      const rooms = (db.prepare('SELECT DISTINCT room FROM updates').all() as Array<{ room: string }>).map((r) => r.room)
      return rooms.filter((room) => {
        try {
          readRoom(room)
          return false
        } catch {
          return true
        }
      })
    },
    async close() {
      await maintenance.stop()
      if (!db.open) return
      db.pragma('wal_checkpoint(TRUNCATE)')
      db.close()
    },
  }
}
