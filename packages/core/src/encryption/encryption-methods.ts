import { MemoryError } from '../store/errors.js'
import type { EncryptionApi } from './api.js'
import { checkKey } from './key-option.js'
import type { StoreEncryption } from './store-encryption.js'

/** What `memory.encryption`'s methods need of the store they belong to. */
export interface EncryptionHandle {
  /** The store's encryption once its code is loaded (at open with the `encryption` option, or by `enable`). */
  current(): StoreEncryption | undefined
  /** Loads the store's encryption and binds it to the store (once). */
  load(): Promise<StoreEncryption>
  assertOpen(): void
}

/** `memory.encryption`'s status, enable and rekey: loaded on the first of them (the open options are checked at open, without them). */
export function createEncryptionApi(handle: EncryptionHandle): Omit<EncryptionApi, 'subscribe'> {
  const { assertOpen } = handle
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
  }
}
