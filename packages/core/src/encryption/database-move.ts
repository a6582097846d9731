import type { DBCoreKeyRange, Dexie } from 'dexie'
import { MemoryError } from '../store/errors.js'
import { reportError } from '../store/report-error.js'
import { MOVE_META_KEY, MOVED_META_KEY } from './move-marks.js'
import { eraseDatabases } from './erase-database.js'
import type { CryptoSlot } from './slot.js'

/*
 * The last step of `enable` and `rekey`: the store moves into a fresh database
 * and the old one is deleted (erase-database.ts), because re-writing rows in
 * place leaves the superseded ones (plaintext, or sealed with retired keys) in
 * the engine's files: LevelDB in Chromium keeps them until a compaction it
 * runs at its own pace.
 *
 * The store stays usable throughout. Rows are copied as stored (sealed rows
 * stay sealed, nothing is decrypted), table by table in batches; meanwhile the
 * middleware (slot.ts) reports every write, and the keys written are copied
 * again, round after round, until few are left. Then, at a moment when no
 * read-write transaction of the store is in flight on the old database, one
 * synchronous step opens a read-write transaction over every store of the new
 * one and points every later transaction of the store at the new database:
 * IndexedDB runs those only after that first one, in which the last keys
 * written (read from the old database, where nothing can write any more) are
 * copied and the new database is marked complete (`encryption.moved`). Should
 * that transaction fail, the transactions queued behind it are aborted and the
 * store goes back to the old database, which is still whole.
 *
 * A crash before the mark leaves a copy without it, which the next open
 * deletes (database-move-recovery.ts), and the move starts again; a crash
 * after it leaves the old database, which the next open deletes.
 */

/** Where a move is: each state follows the one before, `failed` may follow any before `switched`. */
export type MoveState = 'copying' | 'catching-up' | 'switching' | 'switched' | 'erasing' | 'done' | 'failed'

/** Keys written since they were last copied, per table: keys as stored, and ranges deleted (null: the whole table). */
interface Written {
  keys: Map<string, IDBValidKey>
  ranges: Array<IDBKeyRange | null>
}

/** What a move needs from the store's encryption. */
export interface MoveOptions {
  readonly factory: IDBFactory
  readonly keyRange: typeof IDBKeyRange
  readonly slot: CryptoSlot
  /** The database the rows are in now. */
  readonly source: IDBDatabase
  /** Creates and opens the fresh database with the store's schema. */
  openTarget(): Promise<Dexie>
  /** Closes the source's connection once the store uses the new database. */
  closeSource(): void
  readonly batchSize: number
  stopped(): boolean
  onProgress(rows: number): void
  onState?(state: MoveState): void
}

/** Keys left to copy at which the move switches over (read and written in its last transaction). */
const SWITCH_AT = 200
/** A `meta` key no row has: read to keep a transaction waiting. */
const KEEP_ALIVE_KEY = '\uffffengram-move'
/** Catch-up rounds before the switch waits for no more than the keys left. */
const MAX_ROUNDS = 20

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
    tx.onabort = () => reject(tx.error ?? new DOMException('The transaction was aborted', 'AbortError'))
  })
}

/** A string that is equal for equal IndexedDB keys (dedupes the keys written between rounds). */
function keyId(key: unknown): string {
  const tag = (k: unknown): unknown => {
    if (typeof k === 'string') return ['s', k]
    if (typeof k === 'number') return ['n', k]
    if (k instanceof Date) return ['d', k.getTime()]
    if (Array.isArray(k)) return ['a', ...k.map(tag)]
    const bytes = k instanceof ArrayBuffer ? new Uint8Array(k) : ArrayBuffer.isView(k) ? new Uint8Array(k.buffer, k.byteOffset, k.byteLength) : undefined
    return ['b', bytes ? Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') : String(k)]
  }
  return JSON.stringify(tag(key))
}

function idbRange(range: DBCoreKeyRange, keyRange: typeof IDBKeyRange): IDBKeyRange | null | undefined {
  // Dexie's range types: 1 equal, 2 range, 3 any, 4 never.
  if (range.type === 4) return undefined
  if (range.type === 3) return null
  const { lower, upper, lowerOpen, upperOpen } = range
  if (lower === undefined) return upper === undefined ? null : keyRange.upperBound(upper, !!upperOpen)
  return upper === undefined ? keyRange.lowerBound(lower, !!lowerOpen) : keyRange.bound(lower, upper, !!lowerOpen, !!upperOpen)
}

/** The middleware's view of the store's writes during a move (installed in `slot.move`). */
interface WriteWatch {
  /** Takes the keys written on the source since the last call. */
  take(): Map<string, Written>
  /** Keys (a range counts as many) written since the last `take`. */
  pending(): number
  /** Calls `fn` synchronously at the first moment no read-write transaction of the store is in flight on the source. */
  whenIdle(fn: () => void): void
  /** From now on every transaction opens on `target`; those opened until `endSwitch` are collected in `late`. */
  beginSwitch(target: IDBDatabase, late: Set<IDBTransaction>): void
  endSwitch(): void
  /** Back to the source (a failed switch). */
  revert(): void
  /** Stops watching: only where transactions open stays. */
  uninstall(): void
}

function watchWrites(slot: CryptoSlot, source: IDBDatabase, keyRange: typeof IDBKeyRange): WriteWatch {
  // A store moved once already runs on the database of that move: it stays the target until the switch.
  const previous = slot.move?.target
  let written = new Map<string, Written>()
  let inFlight = 0
  let idle: Array<() => void> = []
  let switched = false
  let late: Set<IDBTransaction> | undefined
  slot.move = {
    ...(previous ? { target: previous } : {}),
    opened(trans, mode) {
      if (switched) {
        late?.add(trans)
        return
      }
      if (mode !== 'readwrite') return
      inFlight++
      let settled = false
      const settle = () => {
        if (settled) return
        settled = true
        if (--inFlight > 0) return
        for (const fn of idle.splice(0)) fn()
      }
      trans.addEventListener('complete', settle)
      trans.addEventListener('abort', settle)
    },
    written(table, keys, range, trans) {
      // Writes the target receives after the switch need no copy; those of transactions the source still runs do.
      if ((trans as unknown as IDBTransaction).db !== source) return
      let entry = written.get(table)
      if (!entry) written.set(table, (entry = { keys: new Map(), ranges: [] }))
      if (range) {
        const r = idbRange(range, keyRange)
        if (r !== undefined) entry.ranges.push(r)
        return
      }
      for (const key of keys ?? []) if (key !== undefined && key !== null) entry.keys.set(keyId(key), key as IDBValidKey)
    },
  }
  return {
    take() {
      const out = written
      written = new Map()
      return out
    },
    pending: () => [...written.values()].reduce((n, w) => n + w.keys.size + 1000 * w.ranges.length, 0),
    whenIdle(fn) {
      if (inFlight === 0) fn()
      else idle.push(fn)
    },
    beginSwitch(target, collect) {
      switched = true
      late = collect
      slot.move!.target = target
    },
    endSwitch() {
      late = undefined
    },
    revert() {
      switched = false
      late = undefined
      if (previous) slot.move!.target = previous
      else delete slot.move!.target
    },
    uninstall() {
      idle = []
      const target = slot.move?.target
      slot.move = target ? { target } : undefined
    },
  }
}

/** Rows of the source for the keys and ranges written: what to put or delete in the target. */
interface Rows {
  table: string
  ranges: Array<{ range: IDBKeyRange | null; keys: IDBValidKey[]; values: unknown[] }>
  keys: Array<{ key: IDBValidKey; value: unknown }>
}

/** Reads the rows behind `written` in the read-only transaction `tx` on the source (every request issued at once). */
function readIn(tx: IDBTransaction, written: Map<string, Written>): Promise<Rows[]> {
  return Promise.all(
    [...written.entries()].map(([table, entry]): Promise<Rows> => {
      const store = tx.objectStore(table)
      const ranges = entry.ranges.map((range) => Promise.all([range, request(store.getAllKeys(range)), request(store.getAll(range))] as const))
      const keys = [...entry.keys.values()].map((key) => Promise.all([key, request(store.get(key) as IDBRequest<unknown>)] as const))
      return Promise.all([Promise.all(ranges), Promise.all(keys)]).then(([r, k]) => ({
        table,
        ranges: r.map(([range, keys, values]) => ({ range, keys, values })),
        keys: k.map(([key, value]) => ({ key, value })),
      }))
    }),
  )
}

/** Reads the rows behind `written` from the source in one read-only transaction. */
async function readWritten(source: IDBDatabase, written: Map<string, Written>): Promise<Rows[]> {
  if (written.size === 0) return []
  const tx = source.transaction([...written.keys()], 'readonly')
  const [rows] = await Promise.all([readIn(tx, written), done(tx)])
  return rows
}

/** Puts `rows` into the target inside `tx` (its requests only; the caller waits for the transaction). */
function applyRows(tx: IDBTransaction, rows: readonly Rows[]): void {
  for (const { table, ranges, keys } of rows) {
    const store = tx.objectStore(table)
    const outbound = store.keyPath === null
    const put = (key: IDBValidKey, value: unknown) => (outbound ? store.put(value, key) : store.put(value))
    for (const r of ranges) {
      if (r.range === null) store.clear()
      else store.delete(r.range)
      for (const [i, key] of r.keys.entries()) put(key, r.values[i])
    }
    for (const { key, value } of keys) {
      if (value === undefined) store.delete(key)
      else put(key, value)
    }
  }
}

/** Copies one table of the source into the target in batches of raw rows. */
async function copyTable(o: MoveOptions, target: IDBDatabase, table: string): Promise<void> {
  let after: IDBValidKey | undefined
  for (;;) {
    if (o.stopped()) throw new MemoryError('closed', 'The store closed during the move into a fresh database; it resumes at the next open')
    const range = after === undefined ? null : o.keyRange.lowerBound(after, true)
    const read = o.source.transaction(table, 'readonly')
    const store = read.objectStore(table)
    const [keys, values] = await Promise.all([request(store.getAllKeys(range, o.batchSize)), request(store.getAll(range, o.batchSize)), done(read)])
    if (keys.length === 0) return
    const tx = target.transaction(table, 'readwrite')
    applyRows(tx, [{ table, ranges: [], keys: keys.map((key, i) => ({ key, value: values[i] })) }])
    await done(tx)
    o.onProgress(keys.length)
    if (keys.length < o.batchSize) return
    after = keys[keys.length - 1]
  }
}

/**
 * Points the store at the target once nothing writes to the source, copying the last keys
 * written in the first transaction on the target (every later one waits for it).
 */
function switchOver(o: MoveOptions, target: IDBDatabase, watch: WriteWatch): Promise<void> {
  return new Promise((resolve, reject) => {
    watch.whenIdle(() => {
      try {
        begin()
      } catch (error) {
        watch.revert()
        reject(error)
      }
    })
    function begin(): void {
      if (o.stopped()) throw new MemoryError('closed', 'The store closed during the move into a fresh database')
      const lock = target.transaction([...target.objectStoreNames], 'readwrite')
      const late = new Set<IDBTransaction>()
      watch.beginSwitch(target, late)
      // Over every store of the source: it starts once every read-write transaction opened there before
      // (also one opened before the move began) is over, so the keys written are all known by then.
      const last = o.source.transaction([...o.source.objectStoreNames], 'readonly')
      let outcome: { rows: Rows[] } | { error: unknown } | undefined
      const fail = (error: unknown) => (outcome ??= { error })
      last.onabort = () => fail(last.error)
      last.objectStore('meta').get(KEEP_ALIVE_KEY).onsuccess = () => {
        readIn(last, watch.take()).then((rows) => (outcome ??= { rows }), fail)
      }
      // The lock commits once it has no request left: ask for nothing until the rows arrive.
      const spin = (): void => {
        if (outcome === undefined) {
          lock.objectStore('meta').get(KEEP_ALIVE_KEY).onsuccess = spin
          return
        }
        if ('error' in outcome) return lock.abort()
        applyRows(lock, outcome.rows)
        const meta = lock.objectStore('meta')
        meta.delete(MOVE_META_KEY)
        meta.put({ key: MOVED_META_KEY, value: { from: o.source.name } })
      }
      spin()
      lock.oncomplete = () => {
        watch.endSwitch()
        resolve()
      }
      lock.onabort = () => {
        // Whatever queued behind the lock would see an incomplete database: it fails instead, and the store goes back.
        for (const tx of late) {
          try {
            tx.abort()
          } catch {
            // Finished already (it never reached the target's data before the lock).
          }
        }
        watch.revert()
        reject(outcome && 'error' in outcome ? outcome.error : (lock.error ?? new MemoryError('internal', 'The move into a fresh database failed')))
      }
    }
  })
}

/**
 * Moves the store's rows from `o.source` into a fresh database, switches the store over to it
 * and erases the source. Resolves with the new database (for the caller to close with the store).
 * @throws MemoryError `closed` when the store closed meanwhile; the storage error of a failed copy (the source stays current).
 */
export async function moveDatabase(o: MoveOptions): Promise<Dexie> {
  const watch = watchWrites(o.slot, o.source, o.keyRange)
  const enter = (state: MoveState) => o.onState?.(state)
  let target: Dexie | undefined
  try {
    enter('copying')
    target = await o.openTarget()
    const to = target.backendDB()
    for (const table of [...o.source.objectStoreNames]) await copyTable(o, to, table)
    enter('catching-up')
    for (let round = 0; round < MAX_ROUNDS && watch.pending() > SWITCH_AT; round++) {
      if (o.stopped()) throw new MemoryError('closed', 'The store closed during the move into a fresh database; it resumes at the next open')
      const rows = await readWritten(o.source, watch.take())
      const tx = to.transaction([...to.objectStoreNames], 'readwrite')
      applyRows(tx, rows)
      await done(tx)
    }
    enter('switching')
    await switchOver(o, to, watch)
    enter('switched')
  } catch (error) {
    watch.uninstall()
    target?.close()
    enter('failed')
    throw error
  }
  watch.uninstall()
  o.closeSource()
  enter('erasing')
  try {
    await eraseDatabases(o.factory, [o.source.name])
  } catch (error) {
    // The store runs on the new database already; the next open deletes the old one.
    reportError(error)
  }
  enter('done')
  return target
}
