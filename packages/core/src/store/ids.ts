/**
 * Time-sortable ids made on the device: UUIDv7 (RFC 9562). Ids made in the same
 * millisecond stay in creation order: the random tail is bumped monotonically.
 */
let lastMs = -1
let lastRand = new Uint8Array(10)

/** Makes a new UUIDv7 string; `now` lets tests control the time part. */
export function newId(now: number = Date.now()): string {
  const bytes = new Uint8Array(16)
  let ms = Math.max(now, lastMs)
  if (ms === lastMs) {
    if (!increment(lastRand)) ms = ++lastMs
  } else {
    crypto.getRandomValues(lastRand)
    lastRand[0]! &= 0x7f // room to increment without overflow in one ms
  }
  lastMs = ms
  let t = ms
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256
    t = Math.floor(t / 256)
  }
  bytes.set(lastRand, 6)
  bytes[6] = 0x70 | (bytes[6]! & 0x0f)
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function increment(bytes: Uint8Array): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] !== 0xff) {
      bytes[i]!++
      return true
    }
    bytes[i] = 0
  }
  lastRand = new Uint8Array(10)
  return false
}
