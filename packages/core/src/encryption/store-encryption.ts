import { cmp, type IndexableType, type Table } from 'dexie'
import { MemoryError } from '../store/errors.js'
import { mapError } from '../store/map-error.js'
import { reportError } from '../store/report-error.js'
import { EngramDb } from '../catalog/schema.js'
import { INDEX_REBUILD_KEY, INDEX_REBUILD_TABLES } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { write } from '../store/write.js'
import type { EncryptionStatus } from './api.js'
import type { AtRestCipher } from './at-rest-seam.js'
import { Generation, type GenerationKeys, generationOf, newGenerationKeys, utf8 } from './codec.js'
import { decodeRow, encodeRow, encryptedTable, isCurrent, type KeyState, PLAIN_TABLES, type TableSpec, tableSpec } from './encrypted-tables.js'
import { moveDatabase } from './database-move.js'
import { MOVE_META_KEY, movedDatabaseName } from './database-names.js'
import { deleteDatabase } from './erase-database.js'
import { checkKey } from './key-option.js'
import { type CryptoSlot, ENCRYPTION_META_KEY } from './slot.js'

/*
 * Key management, `enable`, `rekey` and their resumable migration. Loaded
 * (dynamic import) only by stores that use encryption.
 *
 * Envelope: the app's key (AES-GCM, WebCrypto) wraps a bundle of random data
 * keys, stored clear in `meta` under `encryption`. Unwrapping it at open is the
 * key check: AES-GCM's tag fails for any other key, before any other row is
 * read or written. Each generation has a row key and a hash key (codec.ts).
 */

/** The meta row of a run of `enable` or `rekey` in progress (clear: it holds only table names, stored keys and counts). */
export const PROGRESS_META_KEY = `${ENCRYPTION_META_KEY}.progress`
/** Rows re-encrypted per transaction by default. */
export const DEFAULT_BATCH = 500
const BUNDLE_AAD = utf8.encode('engram-at-rest/v1/keys')
const IV_BYTES = 12

/** The key bundle as stored (clear meta row). */
interface StoredBundle {
  v: 1
  iv: Uint8Array
  sealed: Uint8Array
}

/** What the bundle holds once unwrapped. */
interface Bundle {
  current: number
  /** The generation a run is migrating away from (0: plain rows of `enable`), or null when none runs. */
  previous: number | null
  /** Every generation whose data may still be stored (retired ones open sync's stored updates until they are rewritten). */
  keys: Array<[number, string, string]>
}

/** Progress of a run, stored after each batch. */
interface Progress {
  kind: 'enable' | 'rekey'
  /** The database the store moves into once every row is re-written (database-move.ts); absent: no move. */
  to?: string
  /** The table being migrated, or null once all are. */
  table: string | null
  /** The last stored primary key migrated in `table`. */
  after?: unknown
  done: number
  total: number
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle
  if (!s) throw new MemoryError('crypto', 'At-rest encryption needs WebCrypto (globalThis.crypto.subtle): a secure context in browsers, Node 20+')
  return s
}

const b64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes))
const unb64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

async function wrapBundle(key: CryptoKey, bundle: Bundle): Promise<StoredBundle> {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES))
  try {
    const sealed = await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: BUNDLE_AAD }, key, utf8.encode(JSON.stringify(bundle)))
    return { v: 1, iv, sealed: new Uint8Array(sealed) }
  } catch (error) {
    throw new MemoryError('crypto', 'WebCrypto could not encrypt with the key (is it an AES-GCM key with the encrypt usage?)', { cause: error })
  }
}

async function unwrapBundle(key: CryptoKey, stored: StoredBundle): Promise<Bundle> {
  let plain: ArrayBuffer
  try {
    plain = await subtle().decrypt({ name: 'AES-GCM', iv: new Uint8Array(stored.iv), additionalData: BUNDLE_AAD }, key, new Uint8Array(stored.sealed))
  } catch (error) {
    throw new MemoryError('crypto', 'Wrong key: this memory store is encrypted with another key (nothing was read or written)', { cause: error })
  }
  return JSON.parse(new TextDecoder().decode(plain)) as Bundle
}

function isStoredBundle(value: unknown): value is StoredBundle {
  const v = value as StoredBundle | undefined
  return typeof v === 'object' && v !== null && v.v === 1 && v.iv instanceof Uint8Array && v.sealed instanceof Uint8Array
}

/** The at-rest encryption of one open store. */
export class StoreEncryption {
  private state: KeyState | undefined
  private keys: GenerationKeys[] = []
  private appKey: CryptoKey | undefined
  private progress: Progress | undefined
  private readonly rekeyListeners = new Set<() => void>()
  private running: Promise<void> | undefined
  private busy = false
  private stopped = false
  private readonly specs = new Map<string, TableSpec>()
  private ctx: StoreContext | undefined
  /** The move into a fresh database that ends a run, while it is still to do (or in progress). */
  private moving: { kind: 'enable' | 'rekey'; to: string; done: number; total: number } | undefined
  /** The database a move switched the store to (closed with the store). */
  private movedTo: EngramDb | undefined

  constructor(
    private readonly db: EngramDb,
    private readonly slot: CryptoSlot,
    private readonly onStatus: (status: EncryptionStatus) => void,
    private readonly batchSize: number = DEFAULT_BATCH,
  ) {}

  /** Attaches the store's context once it is built (the search index and writes need it). */
  bind(ctx: StoreContext): void {
    this.ctx = ctx
  }

  /** Reads the key bundle and unlocks the store with `key`. @throws MemoryError `crypto` for a wrong key (nothing read or written). */
  async unlock(key: CryptoKey): Promise<boolean> {
    const [row, progress, move] = await Promise.all([
      this.db.meta.get(ENCRYPTION_META_KEY),
      this.db.meta.get(PROGRESS_META_KEY),
      this.db.meta.get(MOVE_META_KEY),
    ])
    if (row === undefined) return false
    if (!isStoredBundle(row.value)) throw new MemoryError('crypto', 'The key bundle of this store is damaged')
    const bundle = await unwrapBundle(key, row.value)
    this.keys = bundle.keys.map(([gen, data, mac]) => ({ gen, data: unb64(data), mac: unb64(mac) }))
    const byGen = new Map(this.keys.map((k) => [k.gen, new Generation(k)]))
    const current = byGen.get(bundle.current)
    if (!current) throw new MemoryError('crypto', 'The key bundle of this store is damaged (no current key)')
    const previous = bundle.previous === null ? undefined : bundle.previous === 0 ? 'plain' : byGen.get(bundle.previous)
    this.state = { current, previous, byGen }
    this.appKey = key
    if (bundle.previous !== null) this.progress = progress?.value as unknown as Progress | undefined
    else if (move !== undefined) this.moving = { ...(move.value as unknown as { kind: 'enable' | 'rekey'; to: string }), done: 0, total: 0 }
    this.install()
    return true
  }

  /** @throws MemoryError `crypto` unless `key` unwraps the store's key bundle. */
  async verify(key: CryptoKey): Promise<void> {
    const row = await this.db.meta.get(ENCRYPTION_META_KEY)
    if (!isStoredBundle(row?.value)) throw new MemoryError('crypto', 'The key bundle of this store is missing or damaged')
    await unwrapBundle(key, row.value)
  }

  /** True once the store has data keys (encrypted or being encrypted). */
  get active(): boolean {
    return this.state !== undefined
  }

  private install(): void {
    this.slot.unlockOther = async (db, slot) => {
      if (!this.appKey) throw new MemoryError('crypto', 'This store has no key to open another encrypted database with')
      await new StoreEncryption(db as EngramDb, slot, () => {}).unlock(this.appKey)
    }
    this.slot.impl = {
      table: (_name, down) => encryptedTable(down, () => this.state!),
      hashTerms: (terms) => {
        const g = this.state!.current
        return terms.map((t) => g.hashTerm(t))
      },
    }
  }

  status(): EncryptionStatus {
    const s = this.state
    if (!s) return { state: 'plain', generation: 0 }
    const m = this.moving
    if (s.previous === undefined && m)
      return { state: m.kind === 'enable' ? 'encrypting' : 'rekeying', generation: s.current.gen, done: Math.min(m.done, m.total), total: m.total }
    if (s.previous === undefined) return { state: 'encrypted', generation: s.current.gen }
    const p = this.progress
    return {
      state: s.previous === 'plain' ? 'encrypting' : 'rekeying',
      generation: s.current.gen,
      done: Math.min(p?.done ?? 0, p?.total ?? 0),
      total: p?.total ?? 0,
    }
  }

  private emit(): void {
    this.onStatus(this.status())
  }

  /** Resumes a run a previous session left unfinished (background; failures are reported, the next open tries again). */
  resume(): void {
    if ((this.state?.previous === undefined && !this.moving) || this.running) return
    this.running = (this.state?.previous === undefined ? this.move() : this.run()).catch((error: unknown) => {
      if (!this.stopped) reportError(error)
    })
  }

  /** A run in progress (or done), for `enable` / `rekey` callers and tests. */
  whenIdle(): Promise<void> {
    return this.running ?? Promise.resolve()
  }

  /** Encrypts a plain store; resolves once every row is (with `wait: false`, once new rows are and the run goes on in the background). */
  async enable(key: CryptoKey, options: { wait?: boolean } = {}): Promise<void> {
    checkKey('enable(key)', key)
    if (this.state) throw new MemoryError('conflict', 'This store is already encrypted: use memory.encryption.rekey(newKey) to change its key')
    await this.begin(key, 'enable', options.wait !== false)
  }

  async rekey(key: CryptoKey): Promise<void> {
    checkKey('rekey(newKey)', key)
    if (!this.state) throw new MemoryError('conflict', 'This store is not encrypted: use memory.encryption.enable(key) first')
    await this.begin(key, 'rekey', true)
  }

  private async begin(key: CryptoKey, kind: 'enable' | 'rekey', wait: boolean): Promise<void> {
    if (this.busy || this.state?.previous !== undefined || this.moving)
      throw new MemoryError(
        'conflict',
        `An ${this.state?.previous === 'plain' || this.moving?.kind === 'enable' ? 'enable' : 'rekey'} run is in progress: wait for it (memory.encryption.subscribe)`,
      )
    this.busy = true
    try {
      const before = this.state
      const gen = Math.max(0, ...this.keys.map((k) => k.gen)) + 1
      const fresh = newGenerationKeys(gen)
      const keys = [...this.keys, fresh]
      const bundle: Bundle = { current: gen, previous: before ? before.current.gen : 0, keys: keys.map((k) => [k.gen, b64(k.data), b64(k.mac)]) }
      const stored = await wrapBundle(key, bundle)
      const order = this.tablesToMigrate()
      const total = await this.countRows(order)
      // Rows re-written in place leave the superseded ones in the engine's files: the run ends by moving
      // the store into a fresh database. A new store (nothing to re-write) has nothing superseded.
      const to = total > 0 && this.canMove() ? movedDatabaseName(this.ctx!.appId, this.ctx!.userId, gen) : undefined
      const copied = to === undefined ? 0 : await this.countRows(this.db.tables.map((t) => t.name))
      const progress: Progress = { kind, ...(to === undefined ? {} : { to }), table: order[0] ?? null, done: 0, total: total + copied }
      const current = new Generation(fresh)
      const byGen = new Map(before?.byGen ?? [])
      byGen.set(gen, current)
      const beforeImpl = this.slot.impl
      // New rows (the rebuilt index first of all) use the new keys from this transaction on.
      this.state = { current, previous: before ? before.current : 'plain', byGen }
      this.install()
      try {
        await this.switchKeys(stored, progress)
      } catch (error) {
        this.state = before
        this.slot.impl = beforeImpl
        throw mapError(error)
      }
      this.keys = keys
      this.appKey = key
      this.progress = progress
      this.emit()
      this.running = this.run()
    } finally {
      this.busy = false
    }
    // A store with one batch or less (a new one) is done before open returns.
    if (wait || this.progress.total <= this.batchSize) await this.running
    else this.running.catch((error: unknown) => (this.stopped ? undefined : reportError(error)))
  }

  /**
   * One transaction: the new key bundle, the progress of the run, and the search index rebuilt
   * from the records with terms hashed by the new keys (so search stays complete during the run).
   */
  private async switchKeys(stored: StoredBundle, progress: Progress): Promise<void> {
    const ctx = this.ctx!
    const db = ctx.db
    const tables = [...INDEX_REBUILD_TABLES, 'vectors', 'embedQueue']
    const rebuildIndex = await ctx.rebuildIndex?.()
    await write(ctx, tables, async (w) => {
      await db.meta.bulkPut([
        { key: ENCRYPTION_META_KEY, value: stored as never },
        { key: PROGRESS_META_KEY, value: progress as never },
      ])
      if (rebuildIndex) {
        // Vectors and queued embeddings survive (the run re-encrypts them); the terms are rebuilt, hashed with the new keys.
        await rebuildIndex(w)
      } else {
        // No search module in this store: drop the index; the search module rebuilds it (hashed) when a store with it opens.
        const had = await db.table('textDocs').count()
        await Promise.all([
          db.table('textDocs').clear(),
          db.table('textBlocks').clear(),
          db.table('textSegs').clear(),
          db.table('textDirs').clear(),
          db.table('textSegDocs').clear(),
          db.table('textCorpus').clear(),
        ])
        if (had > 0) await db.meta.put({ key: INDEX_REBUILD_KEY, value: true })
      }
    })
  }

  /** Tables whose rows the run re-writes (the term tables were rebuilt when it started). */
  private tablesToMigrate(): string[] {
    return this.db.tables.map((t) => t.name).filter((n) => !PLAIN_TABLES.has(n) && n !== 'textDocs')
  }

  private async countRows(tables: readonly string[]): Promise<number> {
    const db = this.db
    return db.transaction('r', tables, async () => {
      const counts = await Promise.all(tables.map((t) => db.table(t).count()))
      return counts.reduce((a, b) => a + b, 0)
    })
  }

  private specOf(table: Table): TableSpec {
    let spec = this.specs.get(table.name)
    if (!spec) this.specs.set(table.name, (spec = tableSpec(table.core)))
    return spec
  }

  /** Re-writes rows in batches until every table is done, then retires the old keys. */
  private async run(): Promise<void> {
    const order = this.tablesToMigrate()
    for (;;) {
      if (this.stopped || !this.db.isOpen()) return
      const p = this.progress!
      if (p.table === null) break
      const next = await this.batch(p, order)
      this.progress = next
      this.emit()
      // Let the app's own transactions in between batches.
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
    if (this.stopped) return
    await this.finish()
  }

  /** Migrates the next rows of `p.table`; returns the progress after them. */
  private async batch(p: Progress, order: readonly string[]): Promise<Progress> {
    const db = this.db
    const state = this.state!
    const table = db.table(p.table!)
    const spec = this.specOf(table)
    const extractPk = table.core.schema.primaryKey.extractKey!
    try {
      return await db.transaction('rw', [table.name, 'meta'], async (tx) => {
        // Rows as stored: this transaction decrypts and encrypts them itself.
        this.slot.raw.add(tx.idbtrans)
        const from = p.after === undefined ? table.toCollection() : table.where(':id').above(p.after)
        const rows = (await from.limit(this.batchSize).toArray()) as Record<string, unknown>[]
        const puts: Record<string, unknown>[] = []
        const moved: Array<{ old: unknown; row: Record<string, unknown> }> = []
        for (const raw of rows) {
          if (isCurrent(spec, raw, state.current.gen)) continue
          const row = encodeRow(spec, decodeRow(spec, raw, state) as Record<string, unknown>, state.current)
          const oldPk = extractPk(raw)
          if (cmp(oldPk, extractPk(row)) === 0) puts.push(row)
          else moved.push({ old: oldPk, row })
        }
        if (moved.length > 0) {
          // A row already written under the new key is newer than the one being migrated: keep it.
          const existing = await table.bulkGet(moved.map((m) => extractPk(m.row) as IndexableType))
          await table.bulkDelete(moved.map((m) => m.old as IndexableType))
          moved.forEach((m, i) => {
            if (existing[i] === undefined) puts.push(m.row)
          })
        }
        if (puts.length > 0) await table.bulkPut(puts)
        const last = rows.length === this.batchSize ? extractPk(rows[rows.length - 1]!) : undefined
        const next: Progress =
          last === undefined
            ? { ...p, table: order[order.indexOf(p.table!) + 1] ?? null, done: p.done + rows.length }
            : { ...p, after: last, done: p.done + rows.length }
        if (last === undefined) delete next.after
        await db.meta.put({ key: PROGRESS_META_KEY, value: next as never })
        return next
      })
    } catch (error) {
      throw mapError(error)
    }
  }

  /** Every row is re-written: the bundle without a migration source, the progress row gone (and the move to do noted). */
  private async finish(): Promise<void> {
    const state = this.state!
    const p = this.progress!
    const bundle: Bundle = { current: state.current.gen, previous: null, keys: this.keys.map((k) => [k.gen, b64(k.data), b64(k.mac)]) }
    const stored = await wrapBundle(this.appKey!, bundle)
    const db = this.db
    const move = p.to === undefined ? undefined : { kind: p.kind, to: p.to }
    await db.transaction('rw', ['meta'], async () => {
      await db.meta.put({ key: ENCRYPTION_META_KEY, value: stored as never })
      await db.meta.delete(PROGRESS_META_KEY)
      if (move) await db.meta.put({ key: MOVE_META_KEY, value: move })
    })
    this.state = { ...state, previous: undefined }
    this.progress = undefined
    if (move) this.moving = { ...move, done: p.done, total: p.total }
    this.emit()
    for (const listener of [...this.rekeyListeners]) listener()
    if (move) await this.move()
  }

  /** Whether this store can move into a fresh database: its next open must find it (`indexedDB.databases()`). */
  private canMove(): boolean {
    return typeof this.factory()?.databases === 'function'
  }

  private factory(): IDBFactory | undefined {
    return this.ctx?.dbDeps?.indexedDB ?? globalThis.indexedDB
  }

  /** Moves the store into a fresh database and deletes the old one (database-move.ts); then the run is over. */
  private async move(): Promise<void> {
    const m = this.moving!
    const factory = this.factory()!
    if (m.total === 0) m.total = await this.countRows(this.db.tables.map((t) => t.name))
    // A copy a move cut short left behind (in this session; the next open deletes those of earlier ones).
    await deleteDatabase(factory, m.to)
    const previous = this.movedTo
    const source = this.slot.move?.target ?? this.db.backendDB()
    const deps = this.ctx?.dbDeps ?? {}
    // A failure leaves the run unfinished (the status says so); the next open moves the store again.
    const moved = (await moveDatabase({
      factory,
      keyRange: deps.IDBKeyRange ?? globalThis.IDBKeyRange,
      slot: this.slot,
      source,
      async openTarget() {
        const db = new EngramDb(m.to, deps)
        await db.open()
        return db
      },
      closeSource: () => (previous ? previous.close() : source.close()),
      batchSize: this.batchSize,
      stopped: () => this.stopped,
      onProgress: (rows) => {
        m.done += rows
        this.emit()
      },
    }).catch((error: unknown) => {
      throw mapError(error)
    })) as EngramDb
    // Closed while the move finished: the next open finds the new database by itself.
    if (this.stopped) moved.close()
    this.movedTo = moved
    this.moving = undefined
    this.emit()
  }

  stop(): void {
    this.stopped = true
    this.movedTo?.close()
  }

  /** Seals small values (sync's stored Yjs updates) with the current data key. */
  readonly cipher: AtRestCipher = {
    active: () => this.state !== undefined,
    generation: () => this.state?.current.gen ?? 0,
    seal: (bytes, context) => {
      const s = this.state
      if (!s) throw new MemoryError('crypto', 'This store is not encrypted')
      return s.current.seal(bytes, utf8.encode(context))
    },
    open: (sealed, context) => {
      const gen = generationOf(sealed)
      const g = gen === undefined ? undefined : this.state?.byGen.get(gen)
      if (!g) throw new MemoryError('crypto', 'A stored sync update was encrypted with a key this store does not have')
      return g.open(sealed, utf8.encode(context))
    },
    generationOf: (sealed) => generationOf(sealed),
    onKeysChanged: (listener) => {
      this.rekeyListeners.add(listener)
      return () => this.rekeyListeners.delete(listener)
    },
  }
}
