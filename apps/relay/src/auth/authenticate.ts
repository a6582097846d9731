import { CloseCode } from '@engram/sync/close-codes'
import { canonicalRoomName } from '@engram/sync/room-name'
import { errorMessage } from '../log.js'
import { defaultAuthorize } from './authorize.js'
import type { Authorize } from './authorize.js'
import { verifyToken } from './tokens.js'
import type { TokenChecks, TokenGrant, VerifyKey } from './tokens.js'

/**
 * Why a connection was refused before any document was loaded; `unavailable`
 * when the `authorize` callback failed.
 */
export type RefusalReason = 'tokenMissing' | 'tokenInvalid' | 'tokenExpired' | 'roomForbidden' | 'roomInvalid' | 'unavailable'

/** The outcome of checking a connection's token and room; `error` says why `authorize` failed. */
export type AuthResult =
  | ({ ok: true; room: string } & TokenGrant)
  | { ok: false; code: (typeof CloseCode)[RefusalReason]; reason: RefusalReason; error?: string }

/**
 * The room named by a request path (`/u1/project` → `u1/project`) in its
 * canonical spelling (each segment decoded and encoded again, see
 * `@engram/sync/room-name`), or null when it cannot be decoded, has an empty
 * segment, is too long or holds control characters.
 */
export function roomFromPath(pathname: string): string | null {
  return canonicalRoomName(pathname.replace(/^\/+/, ''))
}

/** The outcome of checking a token alone (the multiplexed endpoint authorises each document later). */
export type TokenResult = ({ ok: true } & TokenGrant) | { ok: false; code: (typeof CloseCode)[RefusalReason]; reason: RefusalReason }

/** Verify the `token` query parameter of an upgrade request URL. Never logs or returns the token. */
export async function authenticateToken(url: string, key: VerifyKey | Promise<VerifyKey>, checks: TokenChecks = {}): Promise<TokenResult> {
  const parsed = new URL(url, 'http://relay.invalid')
  const verified = await verifyToken(parsed.searchParams.get('token'), await key, checks)
  if (!verified.ok) return { ok: false, code: CloseCode[verified.reason], reason: verified.reason }
  return { ok: true, user: verified.user, expiresAt: verified.expiresAt, issuedAt: verified.issuedAt, readOnly: verified.readOnly }
}

/** The outcome of authorising one room for a verified token. */
export type RoomResult = { ok: true; room: string } | { ok: false; reason: 'roomInvalid' | 'roomForbidden' | 'unavailable'; error?: string }

/**
 * Whether `grant` may open the room `name` (canonical spelling first, then `authorize`): the
 * same rule for a room's own socket and for a document on the multiplexed one.
 */
export async function authorizeRoom(grant: TokenGrant, name: string, authorize: Authorize = defaultAuthorize): Promise<RoomResult> {
  const room = canonicalRoomName(name)
  if (room === null) return { ok: false, reason: 'roomInvalid' }
  let allowed: boolean
  try {
    allowed = (await authorize(grant, room)) === true
  } catch (err) {
    return { ok: false, reason: 'unavailable', error: errorMessage(err) }
  }
  if (!allowed) return { ok: false, reason: 'roomForbidden' }
  return { ok: true, room }
}

/**
 * Authenticate an upgrade request URL (`/u1/p1?token=…`): token first, then
 * the room name, then `authorize` (default: the user's own rooms only).
 * Never logs or returns the token.
 */
export async function authenticate(
  url: string,
  key: VerifyKey | Promise<VerifyKey>,
  checks: TokenChecks = {},
  authorize: Authorize = defaultAuthorize,
): Promise<AuthResult> {
  const verified = await authenticateToken(url, key, checks)
  if (!verified.ok) return verified
  const { ok: _ok, ...grant } = verified
  const room = await authorizeRoom(grant, new URL(url, 'http://relay.invalid').pathname.replace(/^\/+/, ''), authorize)
  if (!room.ok) return { ok: false, code: CloseCode[room.reason], reason: room.reason, ...(room.error !== undefined ? { error: room.error } : {}) }
  return { ok: true, ...grant, room: room.room }
}
