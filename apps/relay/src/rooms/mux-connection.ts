import type { WebSocket } from 'ws'
import { CloseCode } from '@engram/sync/close-codes'
import type { CloseReason } from '@engram/sync/close-codes'
import { decodeMuxFrame, encodeMuxFrame } from '@engram/sync/mux-frames'
import { createRateLimiter } from '../limits/limits.js'
import type { RelayLimits } from '../limits/limits.js'
import { increment } from '../http/metrics.js'
import type { RelayMetrics } from '../http/metrics.js'
import type { TokenGrant } from '../auth/tokens.js'
import type { Peer, Room } from './room.js'
import { type Link, openSocketLink } from './socket-link.js'

/** What opening a document on a multiplexed socket gives: its room, or why it is refused. */
export type DocumentAdmission = { ok: true; room: Room } | { ok: false; reason: CloseReason }

/** What a multiplexed socket needs from its relay. */
export interface MuxContext {
  limits: RelayLimits
  metrics: RelayMetrics
  /** Authorise, count and load one document for `grant` (the rules of a room's own socket). */
  admit(grant: TokenGrant, room: string): Promise<DocumentAdmission>
  /** A document admitted by `admit` left this socket: free its slot, unload it when idle. */
  release(grant: TokenGrant, room: Room): void
  /** The owner purged `room`: delete it; resolves with null when done, or why not. */
  drop(grant: TokenGrant, room: string): Promise<CloseReason | null>
  /** Called once when the socket is gone (every document released). */
  onLeft(conn: MuxConnection): void
}

/** An accepted, authenticated multiplexed socket: many documents, one per room name. */
export interface MuxConnection extends Link {
  /** Documents open (or opening) on the socket. */
  readonly documents: number
}

/** One document on a multiplexed socket. */
interface DocLink {
  readonly name: string
  state: 'opening' | 'open' | 'closed'
  /** Frames that arrived while the document was opening, in order. */
  queue: Uint8Array[]
  queuedBytes: number
  peer?: DocPeer
  room?: Room
  limiter: ReturnType<typeof createRateLimiter>
}

/** The room's side of one document on the socket. */
interface DocPeer extends Peer {
  /** Refuse this document with a documented code; the socket stays. */
  close(reason: CloseReason): void
}

/**
 * Serve the multiplexed protocol (`@engram/sync/mux-frames`) over `ws`: the
 * relay's time first, then documents as the client opens them. Each document
 * is authorised, counted and limited as a room on its own socket would be
 * (frames per second, awareness bytes, document and user quotas); a refusal
 * closes that document only (`refused`, with the close code a room's socket
 * would get), and the socket's own limits (frames per second over all
 * documents, send buffer, malformed frames, token expiry) close the socket.
 * Frames of one document are handled in order, also while it is loading.
 */
export function openMuxConnection(ws: WebSocket, grant: TokenGrant, ctx: MuxContext): MuxConnection {
  const { limits, metrics } = ctx
  const docs = new Map<string, DocLink>()
  /** Work per room (open, drop) that later frames of that room wait for. */
  const chains = new Map<string, Promise<void>>()
  let left = false

  const sendFrame = (bytes: Uint8Array): void => conn.send(bytes)

  const chain = (room: string, work: () => Promise<void>): void => {
    const next = (chains.get(room) ?? Promise.resolve()).then(work).catch(() => undefined)
    chains.set(room, next)
    void next.finally(() => {
      if (chains.get(room) === next) chains.delete(room)
    })
  }

  /** The document leaves the socket (refused, closed by the client, or the socket is gone). */
  const detach = (link: DocLink): void => {
    if (link.state === 'closed') return
    const wasOpen = link.state === 'open'
    link.state = 'closed'
    link.queue = []
    if (docs.get(link.name) === link) docs.delete(link.name)
    if (wasOpen && link.room !== undefined && link.peer !== undefined) {
      link.room.leave(link.peer)
      ctx.release(grant, link.room)
    }
  }

  const refuseDoc = (link: DocLink, reason: CloseReason): void => {
    if (link.state === 'closed') return
    increment(metrics.documentsRefused, reason)
    detach(link)
    sendFrame(encodeMuxFrame({ type: 'refused', room: link.name, code: CloseCode[reason], reason }))
  }

  const deliver = (link: DocLink, message: Uint8Array): void => {
    if (link.state !== 'open' || link.room === undefined || link.peer === undefined) return
    if (!link.limiter.take()) return refuseDoc(link, 'rateLimited')
    const reason = link.room.receive(link.peer, message)
    if (reason !== null) refuseDoc(link, reason)
  }

  const openDoc = (name: string): void => {
    if (docs.has(name)) return // opened twice: the first stands
    const awarenessBytes = createRateLimiter(limits.awarenessBytesPerSecond, limits.awarenessBytesPerSecond * 4)
    const link: DocLink = { name, state: 'opening', queue: [], queuedBytes: 0, limiter: createRateLimiter(limits.messagesPerSecond, limits.messageBurst) }
    docs.set(name, link)
    chain(name, async () => {
      const admission = await ctx.admit(grant, name)
      if (!admission.ok) {
        if (link.state === 'opening') {
          // Not counted by `admit`: nothing to release.
          link.state = 'closed'
          if (docs.get(name) === link) docs.delete(name)
          increment(metrics.documentsRefused, admission.reason)
          sendFrame(encodeMuxFrame({ type: 'refused', room: name, code: CloseCode[admission.reason], reason: admission.reason }))
        }
        return
      }
      const { room } = admission
      if (link.state !== 'opening' || left) {
        ctx.release(grant, room)
        return
      }
      const peer: DocPeer = {
        readOnly: grant.readOnly,
        takeAwarenessBytes: (bytes) => awarenessBytes.take(bytes),
        send: (message) => {
          if (link.state === 'open') sendFrame(encodeMuxFrame({ type: 'message', room: name, message }))
        },
        close: (reason) => refuseDoc(link, reason),
      }
      link.peer = peer
      link.room = room
      link.state = 'open'
      metrics.documentsOpened++
      room.join(peer)
      const queued = link.queue
      link.queue = []
      for (const message of queued) deliver(link, message)
    })
  }

  const receive = (bytes: Uint8Array): void => {
    let frame: ReturnType<typeof decodeMuxFrame>
    try {
      frame = decodeMuxFrame(bytes)
    } catch {
      return conn.close('malformedMessage')
    }
    switch (frame.type) {
      case 'open':
        return openDoc(frame.room)
      case 'close': {
        const link = docs.get(frame.room)
        if (link !== undefined) detach(link)
        return
      }
      case 'message': {
        const link = docs.get(frame.room)
        // A document refused or closed a moment ago: frames still in flight are dropped.
        if (link === undefined) return
        if (link.state === 'opening') {
          link.queuedBytes += frame.message.byteLength
          if (link.queuedBytes > limits.maxBufferedBytes) return refuseDoc(link, 'slowConsumer')
          link.queue.push(frame.message)
          return
        }
        return deliver(link, frame.message)
      }
      case 'ping':
        sendFrame(encodeMuxFrame({ type: 'time', time: Date.now() }))
        return
      case 'drop': {
        const name = frame.room
        const link = docs.get(name)
        if (link !== undefined) detach(link)
        chain(name, async () => {
          const refused = await ctx.drop(grant, name)
          sendFrame(encodeMuxFrame({ type: 'dropped', room: name, code: refused === null ? 0 : CloseCode[refused] }))
        })
        return
      }
      default:
        // A frame only the relay sends.
        return conn.close('malformedMessage')
    }
  }

  const conn = openSocketLink(
    ws,
    grant,
    {
      limits,
      metrics,
      limiter: createRateLimiter(limits.muxMessagesPerSecond, limits.muxMessageBurst),
      receive,
      onLeave: () => {
        left = true
        for (const link of Array.from(docs.values())) detach(link)
        ctx.onLeft(conn)
      },
    },
    {
      get documents() {
        return docs.size
      },
    },
  )
  // The relay's time before anything else: the client reads it before it handles any other frame.
  sendFrame(encodeMuxFrame({ type: 'time', time: Date.now() }))
  return conn
}
