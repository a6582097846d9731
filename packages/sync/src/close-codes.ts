/**
 * WebSocket close codes the relay sends, and why: one table that the relay
 * (`@engram/relay`) closes with and this package's connector reads.
 *
 * The stock y-websocket client treats 4400-4499 as permanent (it stops
 * reconnecting and emits `closed`), and every other code as transient. So a
 * refusal that reconnecting cannot fix (bad token, foreign room, malformed
 * input) uses 44xx, and "try again later" conditions use 45xx or 1001.
 *
 * A leaf module (no imports): the relay loads it as `@engram/sync/close-codes`
 * without loading Yjs or the rest of the sync client.
 */
export const CloseCode = {
  /** The relay is shutting down (SIGTERM); reconnect to another instance or later. */
  goingAway: 1001,
  /** A frame exceeded `maxMessageBytes`; enforced by `ws` before buffering. */
  messageTooBig: 1009,
  /** An unexpected server error while loading a room; reconnect later. */
  internalError: 1011,
  /** A frame was not a valid y-websocket message (text, truncated, unknown type, undecodable). */
  malformedMessage: 4400,
  /** No `token` query parameter. */
  tokenMissing: 4401,
  /** The token is not a valid HS256 JWT for this relay (bad signature, bad claims, wrong alg). */
  tokenInvalid: 4402,
  /** The relay's `authorize` refused the token's user this room (by default: a room not named `<sub>/…`). */
  roomForbidden: 4403,
  /** The room name is empty, too long or not decodable. */
  roomInvalid: 4404,
  /**
   * The user already has `maxDocumentsPerUser` documents open (all their sockets): this one is
   * refused. On the multiplexed socket only the document is refused; closing another frees a slot.
   */
  roomQuotaExceeded: 4405,
  /** The update would take the user's stored bytes past `maxBytesPerUser`. */
  byteQuotaExceeded: 4407,
  /** The room's stored data is damaged (corrupt page, undecodable update); an operator must restore it. */
  roomDamaged: 4410,
  /** The document's owner purged it: the relay deleted its room while this link had it open. */
  documentDropped: 4411,
  /** The document would exceed `maxDocumentBytes`. */
  documentTooLarge: 4413,
  /** Awareness states over `maxAwarenessBytesPerConnection` or the room's `maxAwarenessBytesPerRoom`. */
  awarenessTooLarge: 4414,
  /** The token's `exp` has passed: mint a new token and reconnect. */
  tokenExpired: 4419,
  /** The user's tokens issued before a revocation (`engram-relay revoke`) are no longer accepted. */
  tokenRevoked: 4420,
  /** The relay is not accepting connections (shutting down or at its connection cap). */
  unavailable: 4503,
  /** The store (PostgreSQL, SQLite) refused a read or a commit: nothing unacknowledged was kept; reconnect later. */
  storeUnavailable: 4504,
  /** The client did not read its messages fast enough (send buffer over `maxBufferedBytes`). */
  slowConsumer: 4508,
  /** Too many messages per second on this connection, or too many connection attempts. */
  rateLimited: 4529,
  /** The user already has `maxConnectionsPerUser` open connections. */
  tooManyConnections: 4530,
} as const

/** One of the relay's close codes. */
export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode]

/** Name of a close code (`'tokenExpired'`), used as the close reason and the metrics label. */
export type CloseReason = keyof typeof CloseCode

/** The `CloseReason` for a code, or `'other'` for codes the relay does not send itself. */
export function closeReasonOf(code: number): CloseReason | 'other' {
  for (const [name, value] of Object.entries(CloseCode)) {
    if (value === code) return name as CloseReason
  }
  return 'other'
}

/**
 * Whether a code is a refusal that reconnecting cannot fix (4400-4499), as the
 * stock y-websocket client reads it.
 *
 * @example
 * isPermanentCloseCode(CloseCode.roomForbidden) // true
 * isPermanentCloseCode(CloseCode.rateLimited) // false: retry later
 */
export function isPermanentCloseCode(code: number): boolean {
  return code >= 4400 && code < 4500
}

/**
 * Codes the sync client gives to session ends it decides itself; the relay
 * never sends them.
 */
export const ClientCloseCode = {
  /** This side abandoned the socket (offline, stopped, or replaced it). */
  abandoned: 0,
  /** A frame from the relay did not decode. */
  undecodableFrame: 4000,
} as const
