import pg from 'pg'
import type { Logger } from '../log.js'
import { errorMessage } from '../log.js'
import { migratedRoomName } from './persistence.js'
import type { RelayStore, StoredUpdate } from './persistence.js'

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  url: string
  log: Logger
  /** Connections in the pool. Default 10. */
  poolSize?: number
}

/** Advisory-lock class of the relay (two-key form: class, hashtext(room)). */
const lockClass = 0x456e6772 // 'Engr'

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength)

/** Rows per INSERT: two parameters each, under PostgreSQL's 65,535. */
const maxRowsPerInsert = 10_000

/**
 * `INSERT … VALUES ($1, $2), …` for `rows` updates. A parameter per update
 * rather than `unnest(bytea[])`: node-postgres sends Buffer parameters as
 * binary, an array only as hex text that both sides must encode and parse.
 */
function insertStatement(rows: number): string {
  const values: string[] = []
  for (let i = 0; i < rows; i++) values.push(`($${2 * i + 1}, $${2 * i + 2})`)
  return `INSERT INTO engram_relay_updates (room, data) VALUES ${values.join(', ')}`
}

function insertParams(entries: ReadonlyArray<StoredUpdate>): Array<string | Buffer> {
  const params: Array<string | Buffer> = []
  for (const e of entries) params.push(e.room, asBuffer(e.update))
  return params
}
const asBytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)

/**
 * Open the relay's PostgreSQL store: the documents of every relay instance.
 * An update is committed (one multi-row INSERT per batch, updates as binary parameters) before the relay
 * broadcasts or publishes it. Compaction of a room takes a transaction-level
 * advisory lock, so one instance at a time merges it, and it deletes exactly
 * the rows it merged, so rows other instances append meanwhile are kept.
 * Creates its tables on first use (`engram_relay_updates`, `engram_relay_revocations`).
 *
 * @example
 * const store = await openPostgresStore({ url: 'postgres://relay@db/engram', log })
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<RelayStore> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    // Fail fast while the database is away: the relay refuses with storeUnavailable and clients retry.
    connectionTimeoutMillis: 3000,
    query_timeout: 15_000,
  })
  let reported = false
  pool.on('error', (err: Error) => {
    // An idle client lost its connection; the pool replaces it on the next query.
    if (!reported) options.log.warn('postgres connection lost', { error: errorMessage(err) })
    reported = true
  })
  pool.on('connect', () => {
    reported = false
  })

  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    // Two instances starting together must not race on CREATE TABLE.
    await client.query('SELECT pg_advisory_xact_lock($1, 0)', [lockClass])
    await client.query(`CREATE TABLE IF NOT EXISTS engram_relay_updates (
      id bigserial PRIMARY KEY,
      room text COLLATE "C" NOT NULL,
      data bytea NOT NULL
    )`)
    await client.query('CREATE INDEX IF NOT EXISTS engram_relay_updates_room_id ON engram_relay_updates (room, id)')
    await client.query(`CREATE TABLE IF NOT EXISTS engram_relay_revocations (
      user_id text PRIMARY KEY,
      revoked_at bigint NOT NULL
    )`)
    // Rooms stored before names were encoded segment by segment take their canonical name.
    const { rows: stored } = await client.query<{ room: string }>('SELECT DISTINCT room FROM engram_relay_updates')
    for (const { room } of stored) {
      const canonical = migratedRoomName(room)
      if (canonical !== room) await client.query('UPDATE engram_relay_updates SET room = $1 WHERE room = $2', [canonical, room])
    }
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }

  return {
    async load(room) {
      const { rows } = await pool.query<{ data: Buffer }>('SELECT data FROM engram_relay_updates WHERE room = $1 ORDER BY id', [room])
      let bytes = 0
      const updates = rows.map((r) => {
        bytes += r.data.byteLength
        return asBytes(r.data)
      })
      return { updates, bytes }
    },
    async appendMany(entries) {
      if (entries.length === 0) return
      if (entries.length <= maxRowsPerInsert) {
        await pool.query(insertStatement(entries.length), insertParams(entries))
        return
      }
      // Past PostgreSQL's 65,535 parameters: several statements, one transaction.
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        for (let at = 0; at < entries.length; at += maxRowsPerInsert) {
          const chunk = entries.slice(at, at + maxRowsPerInsert)
          await c.query(insertStatement(chunk.length), insertParams(chunk))
        }
        await c.query('COMMIT')
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.release()
      }
    },
    async compact(room, merge) {
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        const locked = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok', [lockClass, room])
        if (locked.rows[0]?.ok !== true) {
          await c.query('ROLLBACK')
          return null
        }
        const { rows } = await c.query<{ id: string; data: Buffer }>('SELECT id, data FROM engram_relay_updates WHERE room = $1 ORDER BY id', [room])
        if (rows.length <= 1) {
          await c.query('COMMIT')
          return { bytes: rows[0]?.data.byteLength ?? 0, rows: rows.length }
        }
        const snapshot = merge(rows.map((r) => asBytes(r.data)))
        // Exactly the merged rows: an id below the last one may still commit later.
        await c.query('DELETE FROM engram_relay_updates WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)])
        await c.query('INSERT INTO engram_relay_updates (room, data) VALUES ($1, $2)', [room, asBuffer(snapshot)])
        await c.query('COMMIT')
        return { bytes: snapshot.byteLength, rows: 1 }
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.release()
      }
    },
    async drop(room) {
      await pool.query('DELETE FROM engram_relay_updates WHERE room = $1', [room])
    },
    async usage(user) {
      // The column sorts bytewise (COLLATE "C"): rooms of `user` lie between `user/` and `user0`.
      const { rows } = await pool.query<{ room: string; bytes: string }>(
        'SELECT room, sum(length(data))::bigint AS bytes FROM engram_relay_updates WHERE room >= $1 AND room < $2 GROUP BY room',
        [user + '/', user + '0'],
      )
      return new Map(rows.map((r) => [r.room, Number(r.bytes)]))
    },
    async revoke(user, atMs) {
      await pool.query(
        `INSERT INTO engram_relay_revocations (user_id, revoked_at) VALUES ($1, $2)
        ON CONFLICT (user_id) DO UPDATE SET revoked_at = greatest(engram_relay_revocations.revoked_at, excluded.revoked_at)`,
        [user, Math.floor(atMs)],
      )
    },
    async revocations() {
      const { rows } = await pool.query<{ user_id: string; revoked_at: string }>('SELECT user_id, revoked_at FROM engram_relay_revocations')
      return new Map(rows.map((r) => [r.user_id, Number(r.revoked_at)]))
    },
    async damagedRooms() {
      // PostgreSQL checks its own pages (data checksums, amcheck); undecodable
      // updates are found when a room loads.
      return []
    },
    async close() {
      await pool.end()
    },
  }
}
