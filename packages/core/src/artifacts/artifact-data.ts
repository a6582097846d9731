import { invalidInput } from '../store/errors.js'

/*
 * The bytes of artifacts: Blobs on the device, base64 text in a JSON dump,
 * identified by their SHA-256 so bytes moved by the app can be checked.
 */

/** The Blob an artifact stores: a string becomes UTF-8 text of the artifact's MIME type. @throws MemoryError `invalid_input`. */
export function toBlob(data: unknown, mimeType: string): Blob {
  if (typeof data === 'string') return new Blob([data], { type: mimeType })
  // Re-wrapped (no copy) so the stored Blob carries the artifact's MIME type.
  if (typeof Blob !== 'undefined' && data instanceof Blob) return data.type === mimeType ? data : new Blob([data], { type: mimeType })
  throw invalidInput('data must be a Blob or a string')
}

/** The SHA-256 of a Blob's bytes, as 64 lower-case hex characters. */
export async function sha256Hex(blob: Blob): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()))
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Base64 of a Blob's bytes (for JSON dumps). */
export async function blobToBase64(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer())
  let binary = ''
  // Chunks keep String.fromCharCode's argument list small.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** The bytes of base64 text. @throws MemoryError `invalid_input` for text that is not base64. */
export function base64ToBytes(text: unknown, where: string): Uint8Array<ArrayBuffer> {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw invalidInput(`${where} must be base64 text`)
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
