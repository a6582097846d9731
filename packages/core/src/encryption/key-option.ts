import { MemoryError } from '../store/errors.js'

/** The `encryption` option of `openMemory` / `createMemory`. */
export interface EncryptionOptions {
  /**
   * The app's AES-GCM key (`CryptoKey`, usages `encrypt` and `decrypt`; may be
   * non-extractable). It only wraps the store's own data keys. Derive one from a
   * passphrase with {@link deriveMemoryKey}.
   */
  key: CryptoKey
  /** Rows `enable` and `rekey` re-write per transaction (default 500). */
  batchSize?: number
}

/** PBKDF2-SHA-256 rounds of {@link deriveMemoryKey} (OWASP 2023: at least 600,000). */
export const MEMORY_KEY_ITERATIONS = 600_000
/** Fewest salt bytes {@link deriveMemoryKey} accepts. */
export const MIN_SALT_BYTES = 16

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle
  if (!s) throw new MemoryError('crypto', 'At-rest encryption needs WebCrypto (globalThis.crypto.subtle): a secure context in browsers, Node 20+')
  return s
}

/**
 * Derives the AES-256-GCM key of a passphrase for `openMemory({ encryption: { key } })`:
 * PBKDF2-SHA-256, {@link MEMORY_KEY_ITERATIONS} rounds. The key is not extractable.
 * Keep the salt (random, at least 16 bytes, e.g. `crypto.getRandomValues(new Uint8Array(16))`)
 * beside the app's settings: the same passphrase and salt give the same key. Takes a
 * few hundred milliseconds by design.
 *
 * @example
 * const key = await deriveMemoryKey(passphrase, salt)
 * const memory = await openMemory({ appId: 'my-agent', userId: 'u_123', encryption: { key } })
 * @throws MemoryError `invalid_input` for an empty passphrase or a salt that is not a Uint8Array of at least 16 bytes, `crypto` without WebCrypto.
 */
export async function deriveMemoryKey(passphrase: string, salt: Uint8Array): Promise<CryptoKey> {
  if (typeof passphrase !== 'string' || passphrase.length === 0)
    throw new MemoryError('invalid_input', 'deriveMemoryKey: passphrase must be a non-empty string')
  if (!(salt instanceof Uint8Array) || salt.byteLength < MIN_SALT_BYTES)
    throw new MemoryError('invalid_input', `deriveMemoryKey: salt must be a Uint8Array of at least ${MIN_SALT_BYTES} random bytes`)
  const s = subtle()
  try {
    const material = await s.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, ['deriveKey'])
    return await s.deriveKey(
      { name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(salt), iterations: MEMORY_KEY_ITERATIONS },
      material,
      { name: 'AES-GCM', length: 256 },
      false,
      ['encrypt', 'decrypt'],
    )
  } catch (error) {
    throw new MemoryError('crypto', 'deriveMemoryKey: WebCrypto could not derive the key', { cause: error })
  }
}

/**
 * Checks a key given as `encryption.key`, `enable(key)` or `rekey(key)`.
 * @throws MemoryError `invalid_input` when it is not an AES-GCM CryptoKey with the usages encrypt and decrypt.
 */
export function checkKey(name: string, key: unknown): asserts key is CryptoKey {
  const algorithm = (key as { algorithm?: { name?: unknown } } | undefined)?.algorithm
  if (typeof key !== 'object' || key === null || typeof (key as CryptoKey).type !== 'string' || algorithm?.name !== 'AES-GCM')
    throw new MemoryError('invalid_input', `${name} must be an AES-GCM CryptoKey (e.g. from deriveMemoryKey(passphrase, salt))`)
  const usages = (key as CryptoKey).usages
  if ((key as CryptoKey).type !== 'secret' || !usages.includes('encrypt') || !usages.includes('decrypt'))
    throw new MemoryError('invalid_input', `${name} needs the usages ['encrypt', 'decrypt']`)
}

/**
 * Checks the `encryption` option.
 * @throws MemoryError `invalid_input` when it is not `{ key: CryptoKey }`.
 */
export function checkEncryptionOption(option: unknown): asserts option is EncryptionOptions {
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw new MemoryError('invalid_input', 'encryption must be { key: CryptoKey } (derive one with deriveMemoryKey(passphrase, salt))')
  for (const name of Object.keys(option)) {
    if (name !== 'key' && name !== 'batchSize') throw new MemoryError('invalid_input', `encryption.${name} is not an option (encryption takes { key })`)
  }
  const batch = (option as { batchSize?: unknown }).batchSize
  if (batch !== undefined && (typeof batch !== 'number' || !Number.isInteger(batch) || batch < 1 || batch > 100_000))
    throw new MemoryError('invalid_input', 'encryption.batchSize must be an integer from 1 to 100000')
  checkKey('encryption.key', (option as { key?: unknown }).key)
}
