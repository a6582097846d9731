/**
 * WebSocket close codes the relay sends, and why.
 *
 * The stock y-websocket client treats 4400-4499 as permanent (it stops
 * reconnecting and emits `closed`), and every other code as transient. So a
 * refusal that reconnecting cannot fix (bad token, foreign room, malformed
 * input) uses 44xx, and "try again later" conditions use 45xx or 1001.
 */
export const CloseCode = {
  /** The relay is shutting down (SIGTERM); reconnect to another instance or later. */
  goingAway: 1001,
  /** A frame exceeded `maxMessageBytes`; enforced by `ws` before buffering. */
  messageTooBig: 1009,
  /** The relay could not persist an update; the room was unloaded, reconnect to resync. */
  internalError: 1011,
  /** A frame was not a valid y-websocket message (text, truncated, unknown type, undecodable). */
  malformedMessage: 4400,
  /** No `token` query parameter. */
  tokenMissing: 4401,
  /** The token is not a valid HS256 JWT for this relay (bad signature, bad claims, wrong alg). */
  tokenInvalid: 4402,
  /** The room is not named `<sub>/…` for the token's user. */
  roomForbidden: 4403,
  /** The room name is empty, too long or not decodable. */
  roomInvalid: 4404,
  /** The document would exceed `maxDocumentBytes`. */
  documentTooLarge: 4413,
  /** The token's `exp` has passed: mint a new token and reconnect. */
  tokenExpired: 4419,
  /** The relay is not accepting connections (shutting down or at its connection cap). */
  unavailable: 4503,
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
