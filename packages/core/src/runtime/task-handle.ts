/**
 * Task handles: short ids a person can read aloud and type ("k3f9q"). Five
 * characters of Crockford's base 32 (no i, l, o, u: nothing to confuse with 1,
 * 0 or v), random, unique in the store. Typed input is read leniently: any
 * case, a leading `#`, and `i`/`l` → `1`, `o` → `0`.
 */

/** The characters of a handle, in Crockford's base 32 order. */
export const HANDLE_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
/** Characters in every handle: 32⁵ ≈ 33.5 million handles. */
export const HANDLE_LENGTH = 5

/** A random handle (not checked for uniqueness: the caller does, in its transaction). */
export function randomHandle(): string {
  const bytes = new Uint8Array(HANDLE_LENGTH)
  crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => HANDLE_ALPHABET[b & 31]).join('')
}

/**
 * Reads what a person typed as (the start of) a handle; undefined when it
 * cannot be one (too long, or a character outside the alphabet).
 */
export function normaliseHandle(typed: string): string | undefined {
  const text = typed.trim().replace(/^#/, '').toLowerCase().replace(/[il]/g, '1').replace(/o/g, '0')
  if (text === '' || text.length > HANDLE_LENGTH) return undefined
  for (const ch of text) if (!HANDLE_ALPHABET.includes(ch)) return undefined
  return text
}

/** Whether a value is a well-formed handle (as stored). */
export function isHandle(value: unknown): value is string {
  return typeof value === 'string' && value.length === HANDLE_LENGTH && normaliseHandle(value) === value
}

/**
 * A handle not in `taken` (checked in memory; for upgrades and imports that
 * hold every handle already). Gives up only if the store is full beyond use.
 */
export function freshHandle(taken: ReadonlySet<string>): string {
  for (let i = 0; i < 1000; i++) {
    const h = randomHandle()
    if (!taken.has(h)) return h
  }
  throw new Error('No free task handle after 1000 tries')
}
