import { CloseCode } from '@engram/sync/close-codes'
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

const maxRoomLength = 512

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
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what a room name must not hold
  if (room === '' || room.length > maxRoomLength || /[\u0000-\u001f\u007f]/.test(room)) return null
  return room
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
  const parsed = new URL(url, 'http://relay.invalid')
  const verified = await verifyToken(parsed.searchParams.get('token'), await key, checks)
  if (!verified.ok) return { ok: false, code: CloseCode[verified.reason], reason: verified.reason }
  const room = roomFromPath(parsed.pathname)
  if (room === null) return { ok: false, code: CloseCode.roomInvalid, reason: 'roomInvalid' }
  const grant: TokenGrant = { user: verified.user, expiresAt: verified.expiresAt, issuedAt: verified.issuedAt, readOnly: verified.readOnly }
  let allowed: boolean
  try {
    allowed = (await authorize(grant, room)) === true
  } catch (err) {
    return { ok: false, code: CloseCode.unavailable, reason: 'unavailable', error: errorMessage(err) }
  }
  if (!allowed) return { ok: false, code: CloseCode.roomForbidden, reason: 'roomForbidden' }
  return { ...verified, room }
}
