import type { WebSocket, RawData } from 'ws'
import { CloseCode, closeReasonOf } from '@engram/sync/close-codes'
import type { CloseReason } from '@engram/sync/close-codes'
import { createRateLimiter } from '../limits/limits.js'
import type { RelayLimits } from '../limits/limits.js'
import { increment } from '../http/metrics.js'
import type { RelayMetrics } from '../http/metrics.js'
import type { Peer, Room } from './room.js'
import type { TokenGrant } from '../auth/tokens.js'

/** An accepted, authenticated WebSocket in one room. */
export interface Connection extends Peer {
  readonly user: string
  readonly room: Room
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

interface ConnectionContext {
  limits: RelayLimits
  metrics: RelayMetrics
  /** Called once when the connection has left its room. */
  onLeft(conn: Connection): void
}

const open = 1
const closeHandshakeMs = 2000

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data))
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
}

/**
 * Join `room` over `ws`: rate-limit and size-check every frame, hand it to the
 * room, and leave the room as soon as the socket is closing.
 */
export function openConnection(ws: WebSocket, grant: TokenGrant, room: Room, ctx: ConnectionContext): Connection {
  const { limits, metrics } = ctx
  const limiter = createRateLimiter(limits.messagesPerSecond, limits.messageBurst)
  const awarenessBytes = createRateLimiter(limits.awarenessBytesPerSecond, limits.awarenessBytesPerSecond * 4)
  let left = false
  let closeReason: CloseReason | null = null
  let terminateLabel: string | null = null

  const leave = (): void => {
    if (left) return
    left = true
    room.leave(conn)
    ctx.onLeft(conn)
  }

  const conn: Connection = {
    user: grant.user,
    room,
    expiresAt: grant.expiresAt,
    issuedAt: grant.issuedAt,
    readOnly: grant.readOnly,
    takeAwarenessBytes: (bytes) => awarenessBytes.take(bytes),
    alive: true,
    send(message) {
      if (left || ws.readyState !== open) return
      if (ws.bufferedAmount > limits.maxBufferedBytes) {
        conn.close('slowConsumer')
        return
      }
      ws.send(message)
      metrics.messagesOut++
      metrics.bytesOut += message.byteLength
    },
    close(reason) {
      if (closeReason !== null || terminateLabel !== null) return
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
      if (closeReason === null && terminateLabel === null) increment(metrics.closed, label)
      terminateLabel ??= label
      leave()
      ws.terminate()
    },
    ping() {
      conn.alive = false
      ws.ping()
    },
  }

  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (left) return
    conn.alive = true
    const bytes = toBytes(data)
    metrics.messagesIn++
    metrics.bytesIn += bytes.byteLength
    if (!isBinary) return conn.close('malformedMessage')
    if (!limiter.take()) return conn.close('rateLimited')
    const reason = room.receive(conn, bytes)
    if (reason !== null) conn.close(reason)
  })
  ws.on('pong', () => {
    conn.alive = true
  })
  ws.on('error', (err: Error & { code?: string }) => {
    // `ws` closes the socket itself (1009 for oversized frames, 1002 for bad framing).
    if (closeReason === null && terminateLabel === null) {
      closeReason = err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'messageTooBig' : 'malformedMessage'
      increment(metrics.closed, closeReason)
    }
    leave()
  })
  ws.on('close', (code: number) => {
    // Closes the relay decided were counted when it decided; count the others here.
    if (closeReason === null && terminateLabel === null) increment(metrics.closed, closeReasonOf(code))
    leave()
  })
  room.join(conn)
  return conn
}
