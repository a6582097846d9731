import { webcrypto } from 'node:crypto'
import { SignJWT, jwtVerify, errors } from 'jose'
import { CloseCode } from './close-codes.js'

/** The outcome of checking a connection's token and room. */
export type AuthResult = { ok: true; user: string; room: string } | { ok: false; code: (typeof CloseCode)[RefusalReason]; reason: RefusalReason }

/** Why a connection was refused before any document was loaded. */
export type RefusalReason = 'tokenMissing' | 'tokenInvalid' | 'tokenExpired' | 'roomForbidden' | 'roomInvalid'

const maxRoomLength = 512
const encoder = new TextEncoder()

/** The raw HMAC key bytes of a shared secret. */
export function secretKey(secret: string | Uint8Array): Uint8Array {
  return typeof secret === 'string' ? encoder.encode(secret) : secret
}

/** A key to verify with, or the raw secret bytes. */
export type VerifyKey = webcrypto.CryptoKey | Uint8Array

/**
 * Import the secret once as a WebCrypto HMAC key: passing raw bytes to `jose`
 * re-imports them on every verification, which dominated connection setup.
 */
export async function importVerifyKey(secret: string | Uint8Array): Promise<webcrypto.CryptoKey> {
  return await webcrypto.subtle.importKey('raw', secretKey(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
}

/**
 * Mint an HS256 token `{ sub: user, iat, exp }` that the relay accepts for rooms `<user>/…`.
 * Production apps do the same on their backend with the relay's shared secret.
 *
 * @example
 * const token = await mintToken('secret', 'u1', 3600)
 * new WebsocketProvider('wss://relay.example', 'u1/project-1', doc, { params: { token } })
 */
export async function mintToken(secret: string | Uint8Array, user: string, ttlSeconds = 3600): Promise<string> {
  if (user === '' || user.includes('/')) throw new TypeError('user must be non-empty and contain no "/"')
  const now = Math.floor(Date.now() / 1000)
  return await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(secretKey(secret))
}

/**
 * Verify a token and return its user, mapping each failure to a refusal reason.
 * A `sub` containing `/` is invalid: it would let `a` reach `a/b`'s rooms.
 */
export async function verifyToken(
  token: string | null,
  key: VerifyKey,
): Promise<{ ok: true; user: string } | { ok: false; reason: 'tokenMissing' | 'tokenInvalid' | 'tokenExpired' }> {
  if (token === null || token === '') return { ok: false, reason: 'tokenMissing' }
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] })
    const sub = payload.sub
    if (typeof sub !== 'string' || sub === '' || sub.includes('/')) return { ok: false, reason: 'tokenInvalid' }
    return { ok: true, user: sub }
  } catch (err) {
    if (err instanceof errors.JWTExpired) return { ok: false, reason: 'tokenExpired' }
    return { ok: false, reason: 'tokenInvalid' }
  }
}

/**
 * The room named by a request path (`/u1/project` → `u1/project`), or null when
 * it cannot be decoded, is empty, too long or holds control characters.
 */
export function roomFromPath(pathname: string): string | null {
  let room: string
  try {
    room = decodeURIComponent(pathname.replace(/^\/+/, ''))
  } catch {
    return null
  }
  // eslint-disable-next-line no-control-regex
  if (room === '' || room.length > maxRoomLength || /[\u0000-\u001f\u007f]/.test(room)) return null
  return room
}

/** Whether `user` may join `room`: only rooms named `<user>/<something>`. */
export function mayJoin(user: string, room: string): boolean {
  return room.length > user.length + 1 && room.startsWith(user + '/')
}

/**
 * Authenticate an upgrade request URL (`/u1/p1?token=…`): token first, then room.
 * Never logs or returns the token.
 */
export async function authenticate(url: string, key: VerifyKey | Promise<VerifyKey>): Promise<AuthResult> {
  const parsed = new URL(url, 'http://relay.invalid')
  const verified = await verifyToken(parsed.searchParams.get('token'), await key)
  if (!verified.ok) return { ok: false, code: CloseCode[verified.reason], reason: verified.reason }
  const room = roomFromPath(parsed.pathname)
  if (room === null) return { ok: false, code: CloseCode.roomInvalid, reason: 'roomInvalid' }
  if (!mayJoin(verified.user, room)) return { ok: false, code: CloseCode.roomForbidden, reason: 'roomForbidden' }
  return { ok: true, user: verified.user, room }
}
