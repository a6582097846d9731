import { xchacha20 } from '@noble/ciphers/chacha.js'
import { poly1305 } from '@noble/ciphers/_poly1305.js'

/*
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha, RFC 8439 §2.8), byte for byte
 * what @noble/ciphers' `xchacha20poly1305` gives, in one pass of the stream
 * and one Poly1305 call. Rows are small (a few hundred bytes), and there the
 * AEAD's fixed costs (a second HChaCha for the one-time key, a streaming MAC
 * object, checks) took two thirds of the time. The stream and the MAC are
 * noble's; only their composition is here, and a test holds it to noble's AEAD.
 */

export const TAG_BYTES = 16

/** The stream from counter 0 over 64 zero bytes, then `data`: block 0 gives the one-time key, the rest is `data` XOR the stream from counter 1. */
function stream(key: Uint8Array, nonce: Uint8Array, data: Uint8Array): Uint8Array {
  const work = new Uint8Array(64 + data.byteLength)
  work.set(data, 64)
  return xchacha20(key, nonce, work, work, 0)
}

/** Poly1305 of `aad` ‖ pad16 ‖ `ciphertext` ‖ pad16 ‖ le64(|aad|) ‖ le64(|ciphertext|) under `oneTimeKey`. */
function tag(oneTimeKey: Uint8Array, aad: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  const a = Math.ceil(aad.byteLength / 16) * 16
  const c = Math.ceil(ciphertext.byteLength / 16) * 16
  const input = new Uint8Array(a + c + 16)
  input.set(aad, 0)
  input.set(ciphertext, a)
  const lengths = new DataView(input.buffer, a + c)
  lengths.setUint32(0, aad.byteLength, true)
  lengths.setUint32(8, ciphertext.byteLength, true)
  return poly1305(input, oneTimeKey)
}

/** Writes the ciphertext of `plain` and its tag into `out` at `at` (`out` has `plain.byteLength + TAG_BYTES` bytes there). */
export function sealInto(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plain: Uint8Array, out: Uint8Array, at: number): void {
  const work = stream(key, nonce, plain)
  const ciphertext = work.subarray(64)
  out.set(ciphertext, at)
  out.set(tag(work.subarray(0, 32), aad, ciphertext), at + ciphertext.byteLength)
  work.fill(0)
}

/** The plain bytes of `sealed` (ciphertext ‖ tag); throws when the tag does not match (nothing of the plain text is returned). */
export function open(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array): Uint8Array {
  if (sealed.byteLength < TAG_BYTES) throw new Error('invalid tag')
  const ciphertext = sealed.subarray(0, sealed.byteLength - TAG_BYTES)
  const work = stream(key, nonce, ciphertext)
  const expected = tag(work.subarray(0, 32), aad, ciphertext)
  const given = sealed.subarray(ciphertext.byteLength)
  let diff = 0
  for (let i = 0; i < TAG_BYTES; i++) diff |= expected[i]! ^ given[i]!
  if (diff !== 0) {
    work.fill(0)
    throw new Error('invalid tag')
  }
  // The one-time key's block is wiped: the plain bytes are a view of the rest.
  work.fill(0, 0, 64)
  return work.subarray(64)
}
