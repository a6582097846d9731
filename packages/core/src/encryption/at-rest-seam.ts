/**
 * What `@engram/sync` uses to keep its local copies (Yjs updates in IndexedDB)
 * encrypted like the store: the store's current data key, synchronously. Not for apps.
 */
export interface AtRestCipher {
  /** True while the store has data keys (encrypted, or being encrypted). */
  active(): boolean
  /** The generation of the data key `seal` uses (0 when not active). */
  generation(): number
  /** Seals `bytes` bound to `context`. @throws MemoryError `crypto` when not active. */
  seal(bytes: Uint8Array, context: string): Uint8Array
  /** @throws MemoryError `crypto` when altered, bound to another context, or sealed with a key the store does not have. */
  open(sealed: Uint8Array, context: string): Uint8Array
  /** The generation a sealed value was written with (undefined: not a sealed value). */
  generationOf(sealed: Uint8Array): number | undefined
  /** Called when a `rekey` (or `enable`) run finishes: sealed copies of older generations should be re-written. */
  onKeysChanged(listener: () => void): () => void
}

/** What a store made in this thread registers. */
export interface AtRestSeam {
  cipher(): AtRestCipher | undefined
  /** Checks `key` against the store as `openMemory` would (a second tab joining a store open in a SharedWorker). */
  verify(key: CryptoKey | undefined): Promise<void>
}

const seams = new WeakMap<object, AtRestSeam>()

/** Registers the at-rest seam of a store made in this thread. */
export function registerAtRest(memory: object, seam: AtRestSeam): void {
  seams.set(memory, seam)
}

/** The at-rest cipher of a store opened in this thread, when its encryption is on; undefined otherwise. Not for apps. */
export function atRestCipherOf(memory: object): AtRestCipher | undefined {
  const cipher = seams.get(memory)?.cipher()
  return cipher?.active() ? cipher : undefined
}

/**
 * Checks `encryption.key` of a connection that joins a store already open (in a worker host) the way
 * `openMemory` checks it. Not for apps.
 * @throws MemoryError `crypto` when the store is encrypted and the key is missing or wrong.
 */
export async function verifyAtRestKey(memory: object, key: CryptoKey | undefined): Promise<void> {
  await seams.get(memory)?.verify(key)
}
