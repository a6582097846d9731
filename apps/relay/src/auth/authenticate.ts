import { CloseCode } from '@engram/sync/close-codes'
import { mayJoin } from './authorize.js'
import { verifyToken } from './tokens.js'
import type { TokenChecks, TokenGrant, VerifyKey } from './tokens.js'

/** Why a connection was refused before any document was loaded. */
export type RefusalReason = 'tokenMissing' | 'tokenInvalid' | 'tokenExpired' | 'roomForbidden' | 'roomInvalid'

/** The outcome of checking a connection's token and room. */
export type AuthResult = ({ ok: true; room: string } & TokenGrant) | { ok: false; code: (typeof CloseCode)[RefusalReason]; reason: RefusalReason }

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
 * Authenticate an upgrade request URL (`/u1/p1?token=…`): token first, then room.
 * Never logs or returns the token.
 */
export async function authenticate(url: string, key: VerifyKey | Promise<VerifyKey>, checks: TokenChecks = {}): Promise<AuthResult> {
  const parsed = new URL(url, 'http://relay.invalid')
  const verified = await verifyToken(parsed.searchParams.get('token'), await key, checks)
  if (!verified.ok) return { ok: false, code: CloseCode[verified.reason], reason: verified.reason }
  const room = roomFromPath(parsed.pathname)
  if (room === null) return { ok: false, code: CloseCode.roomInvalid, reason: 'roomInvalid' }
  if (!mayJoin(verified.user, room)) return { ok: false, code: CloseCode.roomForbidden, reason: 'roomForbidden' }
  return { ...verified, room }
}
