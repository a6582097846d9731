import type { WebSocket } from 'ws'
import type { CloseReason } from '@engram/sync/close-codes'
import { createRateLimiter } from '../limits/limits.js'
import type { RelayLimits } from '../limits/limits.js'
import type { RelayMetrics } from '../http/metrics.js'
import type { Peer, Room } from './room.js'
import type { TokenGrant } from '../auth/tokens.js'
import { type Link, openSocketLink } from './socket-link.js'

export type { Link } from './socket-link.js'

/** An accepted, authenticated WebSocket in one room. */
export interface Connection extends Peer, Link {
  readonly room: Room
  close(reason: CloseReason): void
}

interface ConnectionContext {
  limits: RelayLimits
  metrics: RelayMetrics
  /** Called once when the connection has left its room. */
  onLeft(conn: Connection): void
}

/**
 * Join `room` over `ws`: rate-limit and size-check every frame, hand it to the
 * room, and leave the room as soon as the socket is closing.
 */
export function openConnection(ws: WebSocket, grant: TokenGrant, room: Room, ctx: ConnectionContext): Connection {
  const { limits, metrics } = ctx
  const awarenessBytes = createRateLimiter(limits.awarenessBytesPerSecond, limits.awarenessBytesPerSecond * 4)
  const conn: Connection = openSocketLink(
    ws,
    grant,
    {
      limits,
      metrics,
      limiter: createRateLimiter(limits.messagesPerSecond, limits.messageBurst),
      receive: (bytes) => {
        const reason = room.receive(conn, bytes)
        if (reason !== null) conn.close(reason)
      },
      onLeave: () => {
        room.leave(conn)
        ctx.onLeft(conn)
      },
    },
    {
      room,
      readOnly: grant.readOnly,
      takeAwarenessBytes: (bytes: number) => awarenessBytes.take(bytes),
    },
  )
  room.join(conn)
  return conn
}
