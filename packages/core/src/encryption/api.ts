import type { Unsubscribe } from '../store/status.js'

/** Where a store's at-rest encryption stands. */
export interface EncryptionStatus {
  /**
   * `plain`: not encrypted. `encrypting`: `enable` is re-writing existing rows (new rows are
   * already encrypted). `encrypted`: every row is. `rekeying`: `rekey` is re-encrypting rows under new data keys.
   */
  state: 'plain' | 'encrypting' | 'encrypted' | 'rekeying'
  /** The generation of the data keys new rows use (1 after `enable`, +1 per `rekey`); 0 when plain. */
  generation: number
  /** While `encrypting` or `rekeying`: rows done and rows to do (an estimate taken when the run started). */
  done?: number
  total?: number
}

/**
 * `memory.encryption`: at-rest encryption of the local store (docs/encryption.md).
 * `enable` and `rekey` re-write the store in small transactions in the
 * background; the store stays usable meanwhile, and a run cut short (a crash, a
 * closed tab) resumes the next time the store opens with the key.
 */
export interface EncryptionApi {
  /** The current state. @throws MemoryError `closed`. */
  status(): Promise<EncryptionStatus>
  /**
   * Encrypts a plain store with `key` (an AES-GCM CryptoKey); resolves once every row is
   * encrypted. New rows are encrypted from the first moment on; the search index is
   * rebuilt from the records with hashed terms at the start. Open the store with
   * `encryption: { key }` from then on.
   * @throws MemoryError `invalid_input` (not an AES-GCM key with encrypt and decrypt), `conflict` (already encrypted,
   * or a run in progress), `crypto` (WebCrypto failed), `quota_exceeded`, `closed`.
   */
  enable(key: CryptoKey): Promise<void>
  /**
   * Re-encrypts every row under fresh data keys wrapped by `newKey`; resolves once done.
   * The store switches to `newKey` at once (open it with `newKey` from then on, also if the run
   * is cut short); rows written from then on use the new data keys.
   * @throws MemoryError `invalid_input`, `conflict` (the store is not encrypted, or a run is in progress), `crypto`, `quota_exceeded`, `closed`.
   */
  rekey(newKey: CryptoKey): Promise<void>
  /**
   * Calls `listener` with the status whenever a run makes progress, starts or ends.
   * @throws MemoryError `invalid_input` when `listener` is not a function, `closed`.
   */
  subscribe(listener: (status: EncryptionStatus) => void): Promise<Unsubscribe>
}
