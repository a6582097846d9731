import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { RelayStore, StoredUpdate } from './persistence.js'
import { startWalCheckpointer } from './wal-checkpointer.js'

/** How hard SQLite syncs: `normal` survives a killed process, `full` also a power loss. */
export type SqliteSync = 'normal' | 'full'

/**
 * Open (or create) the relay's SQLite store in `dir/relay.sqlite`.
 *
 * Writes are synchronous (better-sqlite3), in WAL mode, checkpointed by a
 * worker thread: an update is in the
 * WAL when `append` returns, so a relay killed with SIGKILL loses nothing it
 * has acknowledged. `sync: 'full'` also fsyncs each commit (power loss).
 *
 * @example
 * const store = openSqliteStore('./.data/relay')
 */
export function openSqliteStore(dir: string, options: { sync?: SqliteSync } = {}): RelayStore {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'relay.sqlite')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`)
  db.pragma('busy_timeout = 5000')
  // Checkpoints run on a worker thread, not inside a commit on the event loop.
  db.pragma('wal_autocheckpoint = 0')
  db.exec(`CREATE TABLE IF NOT EXISTS updates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    room TEXT NOT NULL,
    data BLOB NOT NULL
  );
  CREATE INDEX IF NOT EXISTS updates_room_id ON updates (room, id);`)

  const selectRoom = db.prepare<[string], { data: Buffer }>('SELECT data FROM updates WHERE room = ? ORDER BY id')
  const insert = db.prepare<[string, Uint8Array]>('INSERT INTO updates (room, data) VALUES (?, ?)')
  const deleteRoom = db.prepare<[string]>('DELETE FROM updates WHERE room = ?')
  const appendTx = db.transaction((entries: ReadonlyArray<StoredUpdate>) => {
    for (const e of entries) insert.run(e.room, e.update)
  })
  const compactTx = db.transaction((room: string, snapshot: Uint8Array) => {
    deleteRoom.run(room)
    insert.run(room, snapshot)
  })
  const checkpointer = startWalCheckpointer(file)

  return {
    load(room) {
      let bytes = 0
      const updates = selectRoom.all(room).map((r) => {
        bytes += r.data.byteLength
        return new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength)
      })
      return { updates, bytes }
    },
    appendMany(entries) {
      appendTx(entries)
    },
    compact(room, snapshot) {
      compactTx(room, snapshot)
    },
    async close() {
      await checkpointer.stop()
      if (!db.open) return
      db.pragma('wal_checkpoint(TRUNCATE)')
      db.close()
    },
  }
}
