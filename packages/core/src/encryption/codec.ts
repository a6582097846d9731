import { type _HMAC, hmac } from '@noble/hashes/hmac.js'
import { type _SHA256, sha256 } from '@noble/hashes/sha2.js'
import { MemoryError } from '../store/errors.js'
import { open as openSealed, sealInto, TAG_BYTES } from './aead.js'

/*
 * The synchronous cryptography of at-rest encryption. IndexedDB commits a
 * transaction as soon as its code waits on anything but IndexedDB, so rows
 * cannot go through WebCrypto (asynchronous) inside the store's transactions.
 * The app's key (WebCrypto, possibly non-extractable) only unwraps the
 * store's random data keys, once at open; rows are then sealed in JavaScript:
 * XChaCha20-Poly1305 (aead.ts, on @noble/ciphers' audited, constant-time stream
 * and MAC; a 24-byte random nonce per row is safe however many rows are written) and HMAC-SHA-256
 * (@noble/hashes) for the keyed hashes of indexed fields and search terms.
 */

/** One generation of data keys: `enable` makes generation 1, each `rekey` the next. */
export interface GenerationKeys {
  gen: number
  /** 32 bytes: XChaCha20-Poly1305 key of rows. */
  data: Uint8Array
  /** 32 bytes: HMAC-SHA-256 key of indexed fields and search terms. */
  mac: Uint8Array
}

/** Format byte of a sealed row value. */
const FORMAT = 1
const NONCE_BYTES = 24
const HEADER_BYTES = 1 + 2 + NONCE_BYTES
/** Bytes of a field hash (128 bits) and of a term hash (96 bits: terms are many, collisions still negligible). */
const FIELD_HASH_BYTES = 16
const TERM_HASH_BYTES = 12
const CACHE_LIMIT = 50_000

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Random bytes drawn from WebCrypto 4 KiB at a time (one call per row costs more than the cipher). */
let pool = new Uint8Array(0)
let poolAt = 0
function randomBytes(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(4096))
    poolAt = 0
  }
  const out = pool.subarray(poolAt, poolAt + n)
  poolAt += n
  return out
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
function base64url(bytes: Uint8Array, length: number): string {
  let out = ''
  let i = 0
  for (; i + 3 <= length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!
  }
  if (i < length) {
    const n = (bytes[i]! << 16) | ((i + 1 < length ? bytes[i + 1]! : 0) << 8)
    out += B64[n >> 18]! + B64[(n >> 12) & 63]!
    if (i + 1 < length) out += B64[(n >> 6) & 63]!
  }
  return out
}

type Mac = _HMAC<_SHA256>

/** A generation's keys ready for use: sealing, opening, hashing (with bounded caches of hashes). */
export class Generation {
  readonly gen: number
  private readonly data: Uint8Array
  private readonly mac: Mac
  /** A copy of `mac` each hash starts from (cloned into, not allocated), and the digest's bytes. */
  private readonly scratch: Mac
  private readonly out = new Uint8Array(32)
  private readonly fieldCache = new Map<string, string>()
  private readonly termCache = new Map<string, string>()

  constructor(keys: GenerationKeys) {
    if (keys.data.byteLength !== 32 || keys.mac.byteLength !== 32) throw new MemoryError('crypto', 'A stored data key has the wrong length')
    this.gen = keys.gen
    this.data = keys.data
    this.mac = hmac.create(sha256, keys.mac)
    this.scratch = this.mac.clone()
  }

  private digest(input: string): Uint8Array {
    const state = this.mac._cloneInto(this.scratch)
    state.update(encoder.encode(input))
    state.digestInto(this.out)
    return this.out
  }

  /** The keyed hash of an indexed field's value; `domain` (table and field) keeps equal values of different fields apart. */
  hashField(domain: string, value: string): string {
    const input = `${domain}\u0000${value}`
    let out = this.fieldCache.get(input)
    if (out === undefined) {
      out = base64url(this.digest(input), FIELD_HASH_BYTES)
      if (this.fieldCache.size >= CACHE_LIMIT) this.fieldCache.clear()
      this.fieldCache.set(input, out)
    }
    return out
  }

  /** The keyed hash of a search term. */
  hashTerm(term: string): string {
    let out = this.termCache.get(term)
    if (out === undefined) {
      out = base64url(this.digest(`term\u0000${term}`), TERM_HASH_BYTES)
      if (this.termCache.size >= CACHE_LIMIT) this.termCache.clear()
      this.termCache.set(term, out)
    }
    return out
  }

  /** Seals `plain` bound to `context` (the table): format byte, generation, nonce, ciphertext and tag. */
  seal(plain: Uint8Array, context: Uint8Array): Uint8Array {
    const out = new Uint8Array(HEADER_BYTES + plain.byteLength + TAG_BYTES)
    out[0] = FORMAT
    out[1] = this.gen & 0xff
    out[2] = this.gen >> 8
    out.set(randomBytes(NONCE_BYTES), 3)
    sealInto(this.data, out.subarray(3, HEADER_BYTES), context, plain, out, HEADER_BYTES)
    return out
  }

  /** @throws MemoryError `crypto` when the value was altered or sealed for another context. */
  open(sealed: Uint8Array, context: Uint8Array): Uint8Array {
    try {
      return openSealed(this.data, sealed.subarray(3, HEADER_BYTES), context, sealed.subarray(HEADER_BYTES))
    } catch (error) {
      throw new MemoryError('crypto', 'A stored value could not be decrypted: it was altered or moved', { cause: error })
    }
  }
}

/** The generation a sealed value was written with, or undefined when it is not a sealed value. */
export function generationOf(sealed: unknown): number | undefined {
  if (!(sealed instanceof Uint8Array) || sealed.byteLength < HEADER_BYTES + 16 || sealed[0] !== FORMAT) return undefined
  return sealed[1]! | (sealed[2]! << 8)
}

/** Fresh random keys of a generation. */
export function newGenerationKeys(gen: number): GenerationKeys {
  if (gen < 1 || gen > 0xffff) throw new MemoryError('crypto', 'No more key generations: export the memory and import it into a new store')
  return { gen, data: globalThis.crypto.getRandomValues(new Uint8Array(32)), mac: globalThis.crypto.getRandomValues(new Uint8Array(32)) }
}

/*
 * Packing the fields of a row that go into its ciphertext: JSON for plain
 * values, raw bytes for typed arrays (stored vectors, term frequencies):
 * u32 length of the JSON header, the header, then each typed array's bytes.
 */

type TypedArrayName = 'Int8Array' | 'Uint8Array' | 'Uint16Array' | 'Uint32Array' | 'Int32Array' | 'Float32Array' | 'Float64Array'
const TYPED: Record<TypedArrayName, { new (buffer: ArrayBuffer, offset: number, length: number): ArrayBufferView; BYTES_PER_ELEMENT: number }> = {
  Int8Array,
  Uint8Array,
  Uint16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
}

/** Packs `fields` (a row's own properties) into bytes. */
export function pack(fields: Record<string, unknown>): Uint8Array {
  let binary: Array<[string, TypedArrayName, ArrayBufferView]> | undefined
  let json: Record<string, unknown> = fields
  for (const name in fields) {
    const value = fields[name]
    if (typeof value !== 'object' || value === null || !ArrayBuffer.isView(value)) continue
    const type = value.constructor.name as TypedArrayName
    if (!(type in TYPED)) throw new MemoryError('internal', `At-rest encryption cannot store a ${type} field (${name})`)
    if (json === fields) json = { ...fields }
    delete json[name]
    ;(binary ??= []).push([name, type, value])
  }
  const header = encoder.encode(JSON.stringify(binary ? { j: json, b: binary.map(([n, t, v]) => [n, t, v.byteLength]) } : { j: json }))
  let size = 4 + header.byteLength
  for (const [, , v] of binary ?? []) size += v.byteLength
  const out = new Uint8Array(size)
  new DataView(out.buffer).setUint32(0, header.byteLength, true)
  out.set(header, 4)
  let at = 4 + header.byteLength
  for (const [, , v] of binary ?? []) {
    out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at)
    at += v.byteLength
  }
  return out
}

/** The fields {@link pack} packed. */
export function unpack(bytes: Uint8Array): Record<string, unknown> {
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true)
  const header = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length))) as { j: Record<string, unknown>; b?: Array<[string, TypedArrayName, number]> }
  const out = header.j
  let at = 4 + length
  for (const [name, type, byteLength] of header.b ?? []) {
    const Ctor = TYPED[type]
    // A copy, aligned, that owns its buffer (stored vectors are used as they are).
    const copy = bytes.slice(at, at + byteLength)
    out[name] = new Ctor(copy.buffer, 0, byteLength / Ctor.BYTES_PER_ELEMENT)
    at += byteLength
  }
  return out
}

export { encoder as utf8 }
