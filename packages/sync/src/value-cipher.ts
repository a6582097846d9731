import { MemoryError } from '@engram/core'

/** The `encryption` option of `startSync`: a ready AES-GCM key, or a passphrase every device of the user shares. */
export type EncryptionOption = { key: CryptoKey } | { passphrase: string }

/** PBKDF2-SHA256 rounds for a passphrase (OWASP 2023 minimum for PBKDF2-HMAC-SHA256). */
export const PBKDF2_ITERATIONS = 310_000

/** Bytes of the AES-GCM nonce, fresh per sealed value. */
const IV_BYTES = 12

/** Domain label of the per-user salt; bump the version to rotate every derived key. */
const SALT_LABEL = 'engram-sync/e2e/v1'

/**
 * Seals and opens mirrored values with AES-GCM. A sealed value is the
 * 12-byte IV followed by the ciphertext and tag. `context` is bound as
 * additional authenticated data, so a value moved to another entry, project or
 * HLC by whoever holds the document fails to open.
 */
export interface ValueCipher {
  seal(plaintext: Uint8Array, context: string): Promise<Uint8Array>
  /** @throws MemoryError `crypto` when the value was sealed with another key or altered. */
  open(sealed: Uint8Array, context: string): Promise<Uint8Array>
}

const encoder = new TextEncoder()

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle
  if (!s) throw new MemoryError('crypto', 'End-to-end encryption needs WebCrypto (globalThis.crypto.subtle): a secure context in browsers, Node 20+')
  return s
}

/**
 * The deterministic per-user salt: SHA-256 of a fixed label and the user id.
 * Every device of the user derives the same key without coordination; the
 * price is that the salt is predictable (see docs/sync.md, key management).
 */
async function userSalt(userId: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await subtle().digest('SHA-256', encoder.encode(`${SALT_LABEL}\u0000${userId}`)))
}

/**
 * Derives the AES-256-GCM key of a passphrase for one user (PBKDF2-SHA256,
 * {@link PBKDF2_ITERATIONS} rounds, salt from the user id). The key is not
 * extractable. Takes a few hundred ms by design.
 * @throws MemoryError `invalid_input` for an empty passphrase, `crypto` without WebCrypto.
 */
export async function deriveSyncKey(passphrase: string, userId: string): Promise<CryptoKey> {
  if (typeof passphrase !== 'string' || passphrase.length === 0) throw new MemoryError('invalid_input', 'encryption.passphrase must be a non-empty string')
  const s = subtle()
  const material = await s.importKey('raw', encoder.encode(passphrase), 'PBKDF2', false, ['deriveKey'])
  return s.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt: await userSalt(userId), iterations: PBKDF2_ITERATIONS },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  )
}

/**
 * Checks the shape of the `encryption` option synchronously (startSync throws before starting).
 * @throws MemoryError `invalid_input` when it is neither `{ key: CryptoKey }` nor `{ passphrase }`.
 */
export function checkEncryptionOption(option: unknown): asserts option is EncryptionOption | undefined {
  if (option === undefined) return
  if (typeof option !== 'object' || option === null) throw new MemoryError('invalid_input', 'encryption must be { key: CryptoKey } or { passphrase: string }')
  if ('passphrase' in option) {
    if (typeof option.passphrase !== 'string' || option.passphrase.length === 0)
      throw new MemoryError('invalid_input', 'encryption.passphrase must be a non-empty string')
    return
  }
  const key = (option as { key?: unknown }).key
  const algorithm = (key as { algorithm?: { name?: unknown } } | undefined)?.algorithm
  if (typeof key !== 'object' || key === null || algorithm?.name !== 'AES-GCM')
    throw new MemoryError('invalid_input', 'encryption.key must be an AES-GCM CryptoKey (or pass { passphrase })')
  const usages = (key as CryptoKey).usages
  if (!usages.includes('encrypt') || !usages.includes('decrypt'))
    throw new MemoryError('invalid_input', "encryption.key needs the usages ['encrypt', 'decrypt']")
}

/**
 * Creates the cipher of an `encryption` option; a passphrase is derived once, lazily.
 * @throws MemoryError `crypto` (from seal/open) when WebCrypto is missing or the derivation fails.
 */
export function createValueCipher(option: EncryptionOption, userId: string): ValueCipher {
  let key: Promise<CryptoKey> | undefined
  const keyOf = (): Promise<CryptoKey> =>
    (key ??= ('key' in option ? Promise.resolve(option.key) : deriveSyncKey(option.passphrase, userId)).catch((error: unknown) => {
      throw error instanceof MemoryError ? error : new MemoryError('crypto', 'Could not derive the sync key', { cause: error })
    }))
  return {
    async seal(plaintext, context) {
      const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES))
      const k = await keyOf()
      try {
        const ct = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(context) }, k, plaintext as BufferSource))
        const out = new Uint8Array(IV_BYTES + ct.byteLength)
        out.set(iv)
        out.set(ct, IV_BYTES)
        return out
      } catch (error) {
        throw new MemoryError('crypto', 'Could not encrypt a mirrored value', { cause: error })
      }
    },
    async open(sealed, context) {
      const k = await keyOf()
      if (!(sealed instanceof Uint8Array) || sealed.byteLength < IV_BYTES + 16) throw new MemoryError('crypto', 'A sealed value is truncated')
      try {
        const plain = await subtle().decrypt(
          { name: 'AES-GCM', iv: sealed.slice(0, IV_BYTES), additionalData: encoder.encode(context) },
          k,
          sealed.slice(IV_BYTES),
        )
        return new Uint8Array(plain)
      } catch (error) {
        throw new MemoryError('crypto', 'A value could not be decrypted: it was encrypted with another key (wrong passphrase?) or altered', { cause: error })
      }
    },
  }
}
