import { webcrypto } from 'node:crypto'
import { SignJWT, jwtVerify, errors } from 'jose'

/** What a valid token grants. */
export interface TokenGrant {
  user: string
  /** `exp`, in epoch milliseconds: the connection is closed then. */
  expiresAt: number
  /** `iat` in epoch milliseconds (0 when absent), compared with revocations. */
  issuedAt: number
  /** `scope: "read"`: the relay drops this connection's document updates. */
  readOnly: boolean
}

/** Claims the relay checks beyond the signature, `sub` and `exp`. */
export interface TokenChecks {
  /** Required `aud` (one of them when the token lists several). */
  audience?: string
  /** Required `iss`. */
  issuer?: string
}

/** Options of {@link mintToken}. */
export interface MintOptions extends TokenChecks {
  /** `read` mints a read-only token; default read and write. */
  scope?: 'read' | 'write'
}

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
 * Mint an HS256 token `{ sub: user, iat, exp }` that the relay accepts for rooms `<user>/…`
 * (with `scope`, `aud` and `iss` when given).
 * Production apps do the same on their backend with the relay's shared secret.
 *
 * @example
 * const token = await mintToken('secret', 'u1', 3600)
 * new WebsocketProvider('wss://relay.example', 'u1/project-1', doc, { params: { token } })
 */
export async function mintToken(secret: string | Uint8Array, user: string, ttlSeconds = 3600, options: MintOptions = {}): Promise<string> {
  if (user === '' || user.includes('/')) throw new TypeError('user must be non-empty and contain no "/"')
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT(options.scope === undefined ? {} : { scope: options.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
  if (options.audience !== undefined) jwt.setAudience(options.audience)
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer)
  return await jwt.sign(secretKey(secret))
}

/** Whether a `scope` claim (space-separated) grants reading only. */
function isReadOnly(scope: unknown): boolean {
  if (typeof scope !== 'string') return false
  const scopes = scope.split(' ')
  return scopes.includes('read') && !scopes.includes('write')
}

/**
 * Verify a token and return its user, mapping each failure to a refusal reason.
 * A `sub` containing `/` is invalid: it would let `a` reach `a/b`'s rooms.
 */
export async function verifyToken(
  token: string | null,
  key: VerifyKey,
  checks: TokenChecks = {},
): Promise<({ ok: true } & TokenGrant) | { ok: false; reason: 'tokenMissing' | 'tokenInvalid' | 'tokenExpired' }> {
  if (token === null || token === '') return { ok: false, reason: 'tokenMissing' }
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      requiredClaims: ['sub', 'exp'],
      ...(checks.audience === undefined ? {} : { audience: checks.audience }),
      ...(checks.issuer === undefined ? {} : { issuer: checks.issuer }),
    })
    const sub = payload.sub
    if (typeof sub !== 'string' || sub === '' || sub.includes('/')) return { ok: false, reason: 'tokenInvalid' }
    return { ok: true, user: sub, expiresAt: (payload.exp ?? 0) * 1000, issuedAt: (payload.iat ?? 0) * 1000, readOnly: isReadOnly(payload.scope) }
  } catch (err) {
    if (err instanceof errors.JWTExpired) return { ok: false, reason: 'tokenExpired' }
    return { ok: false, reason: 'tokenInvalid' }
  }
}
