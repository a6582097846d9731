import type { RawData, WebSocket } from 'ws'
import { CloseCode, closeReasonOf } from '@engram/sync/close-codes'
import type { CloseReason } from '@engram/sync/close-codes'
import type { RateLimiter, RelayLimits } from '../limits/limits.js'
import { increment } from '../http/metrics.js'
import type { RelayMetrics } from '../http/metrics.js'
import type { TokenGrant } from '../auth/tokens.js'

/** An accepted, authenticated WebSocket: a room's own socket, or a multiplexed one. */
export interface Link {
  readonly user: string
  /** When the token expires (epoch ms): the relay closes the connection then. */
  readonly expiresAt: number
  /** When the token was issued (epoch ms), compared with revocations. */
  readonly issuedAt: number
  /** Whether a pong or message arrived since the last ping. */
  alive: boolean
  /** Close with one of the documented codes; idempotent. */
  close(reason: CloseReason): void
  /** Drop the socket without a closing handshake; `label` names why in the close metrics. */
  terminate(label: string): void
  ping(): void
}

/** A {@link Link} with what its protocol needs of the socket. */
export interface SocketLink extends Link {
  /** Send one frame, unless the socket has left; a send buffer over `maxBufferedBytes` closes it (`slowConsumer`). */
  send(bytes: Uint8Array): void
}

/** What a protocol on the socket gives the shared lifecycle. */
export interface SocketLinkOptions {
  limits: RelayLimits
  metrics: RelayMetrics
  /** Frames per second over the whole socket: a frame over it closes the socket (`rateLimited`). */
  limiter: RateLimiter
  /** A binary frame within the socket's rate, while the socket has not left. */
  receive(bytes: Uint8Array): void
  /** Called once, when the socket starts closing or is gone; nothing is sent or received after. */
  onLeave(): void
}

const open = 1
const closeHandshakeMs = 2000

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data))
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
}

/**
 * The lifecycle every accepted socket shares, whatever it carries: frames
 * counted and rate-limited (text frames are malformed), the send buffer
 * bounded, liveness by ping / pong, one close per socket with a documented
 * code (counted once in the close metrics, however it ends), and a peer that
 * does not answer the close frame dropped after a grace period. `own` holds
 * the protocol's own members (getters included); the returned object is the
 * link with them, so the relay holds one object per socket.
 */
export function openSocketLink<T extends object>(ws: WebSocket, grant: TokenGrant, options: SocketLinkOptions, own: T): SocketLink & T {
  const { limits, metrics, limiter } = options
  let left = false
  let closeReason: CloseReason | null = null
  let terminateLabel: string | null = null
  const decided = (): boolean => closeReason !== null || terminateLabel !== null

  const leave = (): void => {
    if (left) return
    left = true
    options.onLeave()
  }

  const link: SocketLink = {
    user: grant.user,
    expiresAt: grant.expiresAt,
    issuedAt: grant.issuedAt,
    alive: true,
    send(bytes) {
      if (left || ws.readyState !== open) return
      if (ws.bufferedAmount > limits.maxBufferedBytes) {
        link.close('slowConsumer')
        return
      }
      ws.send(bytes)
      metrics.messagesOut++
      metrics.bytesOut += bytes.byteLength
    },
    close(reason) {
      if (decided()) return
      closeReason = reason
      increment(metrics.closed, reason)
      leave()
      ws.close(CloseCode[reason], reason)
      // A peer that does not answer the close frame (or reads nothing, like a slow consumer) is dropped.
      setTimeout(() => {
        ws.terminate()
      }, closeHandshakeMs).unref()
    },
    terminate(label) {
      if (!decided()) increment(metrics.closed, label)
      terminateLabel ??= label
      leave()
      ws.terminate()
    },
    ping() {
      link.alive = false
      ws.ping()
    },
  }
  const conn = Object.defineProperties(link, Object.getOwnPropertyDescriptors(own)) as SocketLink & T

  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (left) return
    link.alive = true
    const bytes = toBytes(data)
    metrics.messagesIn++
    metrics.bytesIn += bytes.byteLength
    if (!isBinary) return link.close('malformedMessage')
    if (!limiter.take()) return link.close('rateLimited')
    options.receive(bytes)
  })
  ws.on('pong', () => {
    link.alive = true
  })
  ws.on('error', (err: Error & { code?: string }) => {
    // `ws` closes the socket itself (1009 for oversized frames, 1002 for bad framing).
    if (!decided()) {
      closeReason = err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'messageTooBig' : 'malformedMessage'
      increment(metrics.closed, closeReason)
    }
    leave()
  })
  ws.on('close', (code: number) => {
    // Closes the relay decided were counted when it decided; count the others here.
    if (!decided()) increment(metrics.closed, closeReasonOf(code))
    leave()
  })
  return conn
}
