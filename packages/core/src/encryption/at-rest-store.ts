import { MemoryError } from '../store/errors.js'
import { reportError } from '../store/report-error.js'
import type { EngramDb } from '../catalog/schema.js'
import type { StoreContext } from '../store/store-context.js'
import type { EncryptionApi, EncryptionStatus } from './api.js'
import { createEncryptionApi } from './encryption-methods.js'
import { checkKey, type EncryptionOptions } from './key-option.js'
import type { CryptoSlot } from './slot.js'
import type { StoreEncryption } from './store-encryption.js'

/*
 * How a store uses at-rest encryption: unlocking at open, `memory.encryption`,
 * and the key check sync and the worker host ask for. Loaded only by stores
 * opened with a key or whose app calls `memory.encryption` (the cipher code
 * itself, store-encryption.ts, loads once a store has or gets keys).
 */

/** What the store keeps of its encryption (create-memory.ts holds it; this file fills it). */
export interface AtRestBox {
  /** The store's encryption, once its code is loaded (at open with a key, or by `enable`). */
  encryption?: StoreEncryption
  /** The first load of that code, shared by concurrent callers. */
  loading?: Promise<StoreEncryption>
  /** `memory.encryption.subscribe`'s listeners. */
  readonly listeners: Set<(status: EncryptionStatus) => void>
}

/** Where a store's encryption lives: its database, the middleware's slot, and the open option. */
export interface AtRestTarget {
  readonly db: EngramDb
  readonly crypto: CryptoSlot
  readonly option: EncryptionOptions | undefined
}

/** Loads the cipher code and makes the store's (not yet bound) encryption, once. */
function loadEncryption(box: AtRestBox, target: AtRestTarget): Promise<StoreEncryption> {
  box.loading ??= import('./store-encryption.js').then(({ StoreEncryption }) => {
    box.encryption = new StoreEncryption(target.db, target.crypto, (status) => notify(box, status), batchOf(target.option))
    return box.encryption
  })
  return box.loading
}

function notify(box: AtRestBox, status: EncryptionStatus): void {
  for (const listener of [...box.listeners]) {
    try {
      listener(status)
    } catch (error) {
      reportError(error)
    }
  }
}

/** Rows per migration transaction (`encryption.batchSize`, for tests). */
function batchOf(option: EncryptionOptions | undefined): number | undefined {
  const size = option?.batchSize
  return typeof size === 'number' && Number.isInteger(size) && size > 0 ? size : undefined
}

/**
 * The key check at open, before any other row is read or written.
 * @throws MemoryError `crypto` for a wrong key.
 */
export async function unlockAtOpen(box: AtRestBox, target: AtRestTarget, key: CryptoKey): Promise<void> {
  await (await loadEncryption(box, target)).unlock(key)
}

/**
 * Once the store's context is built: resumes an unfinished migration, or starts encrypting a plain
 * store opened with a key (new rows at once, old ones in the background).
 */
export async function startAtOpen(box: AtRestBox, ctx: StoreContext, key: CryptoKey): Promise<void> {
  const encryption = box.encryption!
  encryption.bind(ctx)
  if (encryption.active) encryption.resume()
  else await encryption.enable(key, { wait: false })
}

/** `memory.encryption`'s status, enable and rekey for the store (subscribe registers without this code). */
export function encryptionApiOf(box: AtRestBox, target: AtRestTarget, ctx: StoreContext): Omit<EncryptionApi, 'subscribe'> {
  return createEncryptionApi({
    current: () => box.encryption,
    async load() {
      const encryption = await loadEncryption(box, target)
      encryption.bind(ctx)
      return encryption
    },
    assertOpen: ctx.assertOpen,
  })
}

/**
 * The key a second connection (a worker tab, sync) opens the store with: the store's own key
 * when it is encrypted; on a plain store a key encrypts it (`encryption.enable`).
 * @throws MemoryError `crypto` for a wrong or missing key, `invalid_input` for a malformed one.
 */
export async function verifyKey(box: AtRestBox, name: string, key: CryptoKey | undefined, enable: (key: CryptoKey) => Promise<void>): Promise<void> {
  const encryption = box.encryption
  if (key === undefined) {
    if (encryption?.active) throw new MemoryError('crypto', `The memory store ${name} is encrypted: open it with encryption: { key }`)
    return
  }
  checkKey('encryption.key', key)
  if (encryption?.active) await encryption.verify(key)
  else await enable(key)
}
