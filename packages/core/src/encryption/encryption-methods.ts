import { MemoryError } from '../errors.js'
import type { EncryptionApi, EncryptionStatus } from './api.js'
import { checkKey } from './key-option.js'
import type { StoreEncryption } from './store-encryption.js'

/** What `memory.encryption`'s methods need of the store they belong to. */
export interface EncryptionHandle {
  /** The store's encryption once its code is loaded (at open with the `encryption` option, or by `enable`). */
  current(): StoreEncryption | undefined
  /** Loads the store's encryption and binds it to the store (once). */
  load(): Promise<StoreEncryption>
  /** The app's `subscribe` listeners, called by the store's encryption on every status change. */
  readonly listeners: Set<(status: EncryptionStatus) => void>
  assertOpen(): void
}

/** `memory.encryption`: loaded on its first call (the open options are checked at open, without it). */
export function createEncryptionApi(handle: EncryptionHandle): EncryptionApi {
  const { assertOpen, listeners } = handle
  return {
    async status() {
      assertOpen()
      return handle.current()?.status() ?? { state: 'plain', generation: 0 }
    },
    async enable(key) {
      assertOpen()
      checkKey('enable(key)', key)
      await (handle.current() ?? (await handle.load())).enable(key)
    },
    async rekey(key) {
      assertOpen()
      checkKey('rekey(newKey)', key)
      const encryption = handle.current()
      if (!encryption?.active) throw new MemoryError('conflict', 'This store is not encrypted: use memory.encryption.enable(key) first')
      await encryption.rekey(key)
    },
    async subscribe(listener) {
      assertOpen()
      if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'encryption.subscribe(listener): listener must be a function')
      listeners.add(listener)
      return async () => {
        listeners.delete(listener)
      }
    },
  }
}
