/**
 * Serialized values as JSON pieces that each fit one Engram record.
 *
 * A run checkpoint's `output` is plain JSON of at most 1 MiB, and a LangGraph
 * checkpoint or pending write can be larger. A value serialized by the saver's
 * serde (`[type, bytes]`) is kept as text: UTF-8 JSON as it is (readable in the
 * browser's storage inspector), anything else as base64. The text is cut into
 * pieces of at most {@link PIECE_LENGTH} UTF-16 units: even if every unit were
 * escaped as `\uXXXX` (6 bytes), a piece stays under the 1 MiB limit.
 */

/** UTF-16 units per piece: 6 bytes each at worst, 786,432 bytes + quotes. */
export const PIECE_LENGTH = 128 * 1024

/** A serialized value as pieces of text. */
export interface EncodedBlob {
  /** The serde type (`json`, `bytes`, …). */
  readonly type: string
  /** `text`: UTF-8 decoded; `base64`: the bytes in base64. */
  readonly encoding: 'text' | 'base64'
  /** The text, in order; joined, they are the whole value. At least one. */
  readonly pieces: string[]
}

const decoder = new TextDecoder('utf-8', { fatal: true })
const encoder = new TextEncoder()

/** Encodes serde output (`[type, bytes]`) as text pieces. */
export function encodeBlob(type: string, bytes: Uint8Array | string): EncodedBlob {
  const { encoding, text } = toText(type, bytes)
  const pieces: string[] = []
  for (let at = 0; at < text.length; at += PIECE_LENGTH) pieces.push(text.slice(at, at + PIECE_LENGTH))
  if (pieces.length === 0) pieces.push('')
  return { type, encoding, pieces }
}

/** Joins pieces back into the bytes serde's `loadsTyped` takes. */
export function decodeBlob(encoding: 'text' | 'base64', pieces: readonly string[]): Uint8Array {
  const text = pieces.join('')
  return encoding === 'text' ? encoder.encode(text) : fromBase64(text)
}

function toText(type: string, bytes: Uint8Array | string): { encoding: 'text' | 'base64'; text: string } {
  if (typeof bytes === 'string') return { encoding: 'text', text: bytes }
  if (type === 'json') {
    try {
      return { encoding: 'text', text: decoder.decode(bytes) }
    } catch {
      // Not valid UTF-8 after all: keep the bytes exactly.
    }
  }
  return { encoding: 'base64', text: toBase64(bytes) }
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
