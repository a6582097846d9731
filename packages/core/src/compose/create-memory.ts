import { MIRRORED_SETS } from '../catalog/lists.js'
import { createChangeFeed } from '../store/change-feed.js'
import { clockWarningOf, loadClockOffset } from '../store/clock-offset.js'
import { highestStoredStamp, RESTORE_MAX_LEAD_MS } from '../replication/clock-restore.js'
import type { AtRestBox } from '../encryption/at-rest-store.js'
import { registerAtRest } from '../encryption/at-rest-seam.js'
import type { EncryptionOptions } from '../encryption/key-option.js'
import { currentDatabaseName } from '../encryption/database-names.js'
import { createCryptoSlot, cryptoMiddleware, ENCRYPTION_META_KEY } from '../encryption/slot.js'
import { MemoryError } from '../store/errors.js'
import { createHybridClock } from '../store/hlc.js'
import { newId } from '../store/ids.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { mapError } from '../store/map-error.js'
import type { Memory } from './memory.js'
import type { AnyModule, ComposedMemory, MemoryModule, ModuleContext } from '../store/module.js'
import { NO_TEXT_INDEX } from '../store/no-text-index.js'
import { createProjects, prepareProjects } from '../projects/projects.js'
import { replicationOnUse } from '../replication/replication-on-use.js'
import { registerReplication } from '../replication/replication-seam.js'
import { databaseName, EngramDb, refuseNewerSchema } from '../catalog/schema.js'

export { databaseName, refuseNewerSchema }
import { createStatusHub } from '../store/status.js'
import type { StoreContext } from '../store/store-context.js'
import { subscribeChanges } from './subscribe-changes.js'
import { createSyncSlot } from '../replication/sync-api.js'
import { estimateTokenizer, type Tokenizer } from '../store/token-estimate.js'
import { checkId, checkOptions } from '../store/validate.js'

/** Options every store takes, whatever its modules. */
export interface BaseMemoryOptions {
  /** Names the database `engram:<appId>:<userId>`. */
  appId: string
  userId: string
  /** IndexedDB factory; inject `fake-indexeddb` in Node. Default: the global one. */
  indexedDB?: IDBFactory
  IDBKeyRange?: typeof IDBKeyRange
  /** Counts tokens for budgets. Default: a fast estimate. */
  tokenizer?: Tokenizer
  /** The clock (epoch ms); inject in tests. */
  now?: () => number
  /**
   * Encrypts the store at rest with the app's AES-GCM key (see docs/encryption.md): every
   * row a user wrote is ciphertext on disk. A plain store opened with it is encrypted in
   * the background (like `memory.encryption.enable`).
   */
  encryption?: EncryptionOptions
}

/** Options of {@link createMemory}: the base options and the modules to compose. */
export interface CreateMemoryOptions<M extends readonly AnyModule[]> extends BaseMemoryOptions {
  modules: M
}

/** The option names {@link createMemory} accepts. */
export const BASE_OPTIONS = ['appId', 'userId', 'indexedDB', 'IDBKeyRange', 'tokenizer', 'now', 'encryption'] as const

/**
 * Opens a store composed from the modules an app lists: only their code is
 * bundled, and only their namespaces exist (the base — projects, changes,
 * status, sync, stats, export — is always there).
 *
 * @example
 * const memory = await createMemory({ appId: 'my-agent', userId: 'u_123', modules: [factsModule(), searchModule()] })
 * @throws MemoryError `invalid_input` on bad or unknown options or modules (a module listed twice, one whose
 * requirement is missing), `conflict` when the database was written by a newer version, `quota_exceeded`,
 * `crypto` when the store is encrypted and the key is wrong or missing (nothing is read or written then).
 */
export async function createMemory<const M extends readonly AnyModule[]>(options: CreateMemoryOptions<M>): Promise<ComposedMemory<M>> {
  const opts = checkOptions('options', options, [...BASE_OPTIONS, 'modules'])
  return composeMemory(opts as CreateMemoryOptions<M>) as Promise<ComposedMemory<M>>
}

/** Opens and composes a store from checked options (shared by `openMemory` and `createMemory`). */
export async function composeMemory(opts: CreateMemoryOptions<readonly AnyModule[]>): Promise<Memory> {
  const appId = checkId('appId', opts.appId)
  const userId = checkId('userId', opts.userId)
  const modules = checkModules(opts.modules)
  if (opts.tokenizer !== undefined && typeof opts.tokenizer?.count !== 'function') throw new MemoryError('invalid_input', 'tokenizer must have count(text)')
  if (opts.now !== undefined && typeof opts.now !== 'function') throw new MemoryError('invalid_input', 'now must be a function returning epoch milliseconds')
  // The option's check loads with the encryption code, in a store that asks for it.
  if (opts.encryption !== undefined) {
    const keyOption: typeof import('../encryption/key-option.js') = await loadOnUse('encryption', () => import('../encryption/key-option.js'))()
    keyOption.checkEncryptionOption(opts.encryption)
  }
  let name: string
  try {
    name = await currentDatabaseName(opts.indexedDB ?? globalThis.indexedDB, databaseName(appId, userId), appId, userId)
  } catch (error) {
    throw mapError(error)
  }
  const rebuildIndex = modules.find((m) => m.database?.rebuildIndex)?.database?.rebuildIndex
  const db = new EngramDb(name, {
    ...(opts.indexedDB ? { indexedDB: opts.indexedDB } : {}),
    ...(opts.IDBKeyRange ? { IDBKeyRange: opts.IDBKeyRange } : {}),
    ...(rebuildIndex ? { rebuildIndex } : {}),
  })
  const crypto = createCryptoSlot()
  db.use(cryptoMiddleware(crypto))
  // Only stores that use encryption load its code (and, once they have keys, the cipher libraries).
  const atRest: AtRestBox = { listeners: new Set() }
  const atRestTarget = { db, crypto, option: opts.encryption }
  const loadAtRest = loadOnUse('encryption', () => import('../encryption/at-rest-store.js'))
  const atRestCode = opts.encryption ? loadAtRest() : undefined
  try {
    // Dexie 4 would open (and extend) a database that a newer schema wrote; refuse first.
    await refuseNewerSchema(opts.indexedDB ?? globalThis.indexedDB, name, db.verno)
    await db.open()
    // The key check, before any other row is read or written.
    if (atRestCode) await (await atRestCode).unlockAtOpen(atRest, atRestTarget, opts.encryption!.key)
    else if ((await db.meta.get(ENCRYPTION_META_KEY)) !== undefined) {
      throw new MemoryError('crypto', `The memory store ${name} is encrypted: open it with encryption: { key } (nothing was read or written)`)
    }
  } catch (error) {
    db.close()
    throw mapError(error)
  }
  const now = opts.now ?? Date.now
  const deviceId = await loadDeviceId(db, now)
  const clockOffset = await loadClockOffset(db)
  // The hybrid clock runs on the relay's time as last learned: stamps made offline after a restart are right too.
  const clockNow = () => now() + clockOffset.ms
  let closed = false
  const assertOpen = () => {
    if (closed) throw new MemoryError('closed', 'This memory store is closed; open it again with openMemory()')
  }
  const status = createStatusHub(now, assertOpen)
  const sync = createSyncSlot(status, assertOpen)
  const ctx: StoreContext = {
    db,
    appId,
    userId,
    now,
    status,
    sync,
    tokenizer: opts.tokenizer ?? estimateTokenizer,
    // Restored past the highest stamp stored within the clock-lead bound. Until the relay's time was ever learned this
    // device cannot tell its wall clock set back from stamps issued too far ahead: its own conversations' stamps count up to a day.
    clock: createHybridClock(
      deviceId,
      clockNow,
      await highestStoredStamp(db, clockNow(), {
        maxLeadMs: clockOffset.boundMs,
        ownLeadMs: clockOffset.learnedAt === undefined ? RESTORE_MAX_LEAD_MS : clockOffset.boundMs,
        deviceId,
      }),
    ),
    clockOffset,
    feed: createChangeFeed(),
    mirrored: MIRRORED_SETS,
    syncedProjects: new Set(),
    conversationProjects: new Set(),
    index: NO_TEXT_INDEX,
    crypto,
    dbDeps: { ...(opts.indexedDB ? { indexedDB: opts.indexedDB } : {}), ...(opts.IDBKeyRange ? { IDBKeyRange: opts.IDBKeyRange } : {}) },
    assertOpen,
    onClose: [],
  }
  const warning = clockWarningOf(clockOffset)
  if (warning !== undefined) status.warn('clock', { message: warning, offsetMs: clockOffset.ms })
  const moduleCtx = ctx as unknown as ModuleContext
  for (const module of modules) module.install?.(moduleCtx)
  for (const module of modules) await module.open?.(moduleCtx)
  if (atRestCode) {
    try {
      await (await atRestCode).startAtOpen(atRest, ctx, opts.encryption!.key)
    } catch (error) {
      for (const stop of ctx.onClose.splice(0)) stop()
      db.close()
      throw mapError(error)
    }
  }
  await prepareProjects(ctx)
  // stats and export read every table: their code loads on first call.
  const loadDump = loadOnUse('export', async () => (await import('../dump/dump.js')).createDump(ctx))
  const dump = methodsOnUse(loadDump, ['stats', 'export'])
  // Asking the browser to keep the origin's data is a one-off (the storage panel of a settings page).
  const loadStorage = loadOnUse('storage', () => import('../store/storage-estimate.js'))
  // memory.encryption's status, enable and rekey load on first call; the open options were checked above.
  const loadEncryptionApi = loadOnUse('encryption', async () => (await loadAtRest()).encryptionApiOf(atRest, atRestTarget, ctx))
  const memory: Partial<Memory> = {
    appId,
    userId,
    deviceId,
    mode: 'local',
    projects: createProjects(ctx),
    changes: { subscribe: (filter, listener) => subscribeChanges(ctx, filter, listener) },
    status: status.api,
    sync: sync.api,
    stats: (projectId) => dump.stats(projectId),
    export: (projectId) => dump.export(projectId),
    persist: async () => (await loadStorage()).requestPersistence(),
    encryption: {
      ...methodsOnUse(loadEncryptionApi, ['status', 'enable', 'rekey']),
      // Registers at once, so a listener added right after open sees a background migration's first progress.
      async subscribe(listener) {
        assertOpen()
        if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'encryption.subscribe(listener): listener must be a function')
        atRest.listeners.add(listener)
        return async () => void atRest.listeners.delete(listener)
      },
    },
    async close() {
      if (closed) return
      closed = true
      atRest.encryption?.stop()
      sync.shutdown()
      for (const stop of ctx.onClose.splice(0)) stop()
      db.close()
    },
  }
  Object.defineProperty(memory, 'closed', { get: () => closed, enumerable: true })

  registerReplication(memory, replicationOnUse(ctx))
  registerAtRest(memory, {
    cipher: () => atRest.encryption?.cipher,
    async verify(key) {
      // A plain store joined without a key needs no encryption code.
      if (key === undefined && !atRest.encryption?.active) return
      await (await loadAtRest()).verifyKey(atRest, name, key, (k) => (memory as Memory).encryption.enable(k))
    },
  })
  for (const module of modules) Object.assign(memory, module.create(moduleCtx, memory))
  return memory as Memory
}

function checkModules(value: unknown): readonly AnyModule[] {
  if (!Array.isArray(value)) throw new MemoryError('invalid_input', 'modules must be an array of modules, e.g. [factsModule(), searchModule()]')
  const names = new Set<string>()
  for (const m of value as MemoryModule[]) {
    if (typeof m !== 'object' || m === null || typeof m.name !== 'string' || typeof m.create !== 'function') {
      throw new MemoryError('invalid_input', 'modules[] must be modules made by factsModule(), conversationsModule(), searchModule(), …')
    }
    if (names.has(m.name)) throw new MemoryError('invalid_input', `module ${JSON.stringify(m.name)} is listed twice`)
    names.add(m.name)
  }
  for (const m of value as MemoryModule[]) {
    for (const needed of m.requires ?? []) {
      if (!names.has(needed))
        throw new MemoryError('invalid_input', `module ${JSON.stringify(m.name)} needs the ${JSON.stringify(needed)} module: add it to modules`)
    }
  }
  return value as MemoryModule[]
}

async function loadDeviceId(db: EngramDb, now: () => number): Promise<string> {
  return db.transaction('rw', db.meta, async () => {
    const row = await db.meta.get('deviceId')
    if (typeof row?.value === 'string') return row.value
    const deviceId = newId(now()).replace(/-/g, '').slice(-16)
    await db.meta.put({ key: 'deviceId', value: deviceId })
    return deviceId
  })
}
