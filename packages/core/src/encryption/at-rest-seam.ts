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

const seams = new WeakMap<object, () => AtRestCipher | undefined>()

/** Registers where a store made in this thread keeps its at-rest cipher. */
export function registerAtRest(memory: object, cipher: () => AtRestCipher | undefined): void {
  seams.set(memory, cipher)
}

/** The at-rest cipher of a store opened in this thread, when its encryption is on; undefined otherwise. Not for apps. */
export function atRestCipherOf(memory: object): AtRestCipher | undefined {
  const cipher = seams.get(memory)?.()
  return cipher?.active() ? cipher : undefined
}
