import { MemoryError } from '@engram/core'
import { ClientCloseCode, CloseCode, isPermanentCloseCode } from './close-codes.js'
import { openMuxChannel, type MuxChannel } from './mux-channel.js'
import { createMuxSocket, type MuxDown, type MuxFailure, type MuxSocket } from './mux-socket.js'
import { backoffTimer, frameTooLargeError, OVERSIZE_BEFORE_ERROR, REFUSALS_BEFORE_ERROR, type RelayLinkOptions, resolveTransport } from './reconnect.js'
import { openRelaySession, type RelaySession, type SessionEnd } from './relay-session.js'
import type { Connection, Connector, ConnectorContext, SyncErrorReason } from './sync-types.js'

/** Refusals of one document that retrying cannot fix, and how the app learns why. */
const PERMANENT: ReadonlyMap<number, SyncErrorReason> = new Map([
  [CloseCode.malformedMessage, 'refused'],
  [CloseCode.roomForbidden, 'unauthorized'],
  [CloseCode.roomInvalid, 'refused'],
  [CloseCode.roomDamaged, 'refused'],
  [CloseCode.documentTooLarge, 'document_too_large'],
])
/** Refusals of one document that another moment may cure, although they are 44xx. */
const RETRIED: ReadonlySet<number> = new Set([CloseCode.roomQuotaExceeded, CloseCode.byteQuotaExceeded, CloseCode.documentDropped])

/** Options of {@link muxConnector}: the one socket opens `<url>/mux`. */
export interface MuxConnectorOptions extends RelayLinkOptions {
  /**
   * Takes a reading of the relay's time (epoch ms): the first of every socket before any frame
   * of the relay is handled, then the answer to every heartbeat.
   */
  clock?: (relayTime: number) => Promise<void>
}

/** A connector whose documents share one socket. */
export interface MuxConnector extends Connector {
  /** Sockets this connector opened so far (one at a time; a new one after each drop). */
  readonly socketsOpened: number
  /** Closes the socket; documents still open see it go down. */
  destroy(): void
}

/**
 * Connects every document of a device to the relay over ONE WebSocket, the
 * relay's multiplexed endpoint `/mux` (wire format: `mux-frames.ts`). Each
 * document opens and closes on it explicitly and speaks the y-websocket
 * protocol inside frames named by its room, with the same proof of what the
 * relay holds as on a room's own socket (`relay-session.ts`). The relay's
 * time comes first on every socket and is read before any frame is handled;
 * every document also reads it from its own sync step (as on its own socket)
 * before its state goes out.
 *
 * A refusal of one document (quota, size, forbidden room) shows on that
 * document only; the socket and the other documents go on. When the socket
 * goes down every document shows 'offline' (or the socket's failure), and once
 * it is back (fresh token, the existing backoff) every open document syncs again.
 */
export function muxConnector(options: MuxConnectorOptions): MuxConnector {
  const { network, heartbeatMs, initialFrameBytes, WebSocketImpl } = resolveTransport(options)
  if (options.clock !== undefined && typeof options.clock !== 'function') throw new MemoryError('invalid_input', 'clock must be a function')
  const socket = createMuxSocket({
    base: options.url.replace(/\/+$/, ''),
    token: options.token,
    WebSocketImpl,
    backoff: options.backoff,
    network,
    heartbeatMs,
    initialFrameBytes,
    clock: options.clock,
    onError: (error) => options.onError?.(error, ''),
  })
  const connector = ((ctx: ConnectorContext) => connectDocument(ctx, socket, options)) as MuxConnector
  Object.defineProperty(connector, 'socketsOpened', { get: () => socket.opened })
  connector.destroy = () => socket.destroy()
  return connector
}

/**
 * One document's states on the shared socket:
 * - `down`: the socket is not up (the document waits for it);
 * - `linked`: the document is open on the socket and the relay does not yet hold everything;
 * - `synced`: the relay confirmed it holds everything sent;
 * - `waiting`: the relay refused the document for now; backing off before opening it again;
 * - `refused`: the relay refused it for good;
 * - `destroyed`.
 */
type State =
  | { name: 'down' }
  | { name: 'linked'; session: RelaySession; channel: MuxChannel }
  | { name: 'synced'; session: RelaySession; channel: MuxChannel }
  | { name: 'waiting'; timer: ReturnType<typeof setTimeout> }
  | { name: 'refused' }
  | { name: 'destroyed' }

function connectDocument(ctx: ConnectorContext, socket: MuxSocket, options: MuxConnectorOptions): Connection {
  const { doc, room, projectId, setStatus, beforeSync, relayTime } = ctx
  let state: State = { name: 'down' }
  let attempt = 0
  let refusals = 0
  let oversize = 0
  /** How the socket went down, while its documents' channels end. */
  let socketEnd: MuxDown | undefined
  /** The document's own failure (a refusal of it), shown until it syncs. */
  let failing: { reason: SyncErrorReason; error: MemoryError } | undefined
  const confirmations: Array<() => void> = []

  const report = (reason: SyncErrorReason, error: MemoryError): void => {
    const first = failing?.reason !== reason
    failing = { reason, error }
    setStatus('error', error, reason)
    if (first) options.onError?.(error, projectId)
  }
  /** The status while the document is not linked: its own failure, else the socket's, else offline. */
  const between = (socketFailure: MuxFailure | undefined = socket.failure): void => {
    if (failing !== undefined) setStatus('error', failing.error, failing.reason)
    else if (socketFailure !== undefined) setStatus('error', socketFailure.error, socketFailure.reason)
    else setStatus('offline')
  }

  function go(next: State): void {
    const prev = state
    state = next
    if (prev.name === 'waiting') clearTimeout(prev.timer)
    if ((prev.name === 'linked' || prev.name === 'synced') && next.name !== 'linked' && next.name !== 'synced') prev.session.abandon('left')
  }

  function open(): void {
    if (state.name !== 'down' || !socket.up) return
    const channel = openMuxChannel(socket, room)
    const session = openRelaySession({
      doc,
      url: room,
      WebSocket: undefined as unknown as new (url: string) => WebSocket,
      socket: () => channel,
      maxFrameBytes: () => socket.frameBytes(room),
      events: {
        onConfirmed: () => onConfirmed(session),
        onEnd: (end) => onEnd(session, end),
        ...(beforeSync ? { beforeSync } : {}),
        ...(relayTime ? { relayTime } : {}),
        onUnsent: () => {
          if (state.name === 'synced' && state.session === session) setStatus('read_only')
        },
      },
    })
    go({ name: 'linked', session, channel })
  }

  function onConfirmed(session: RelaySession): void {
    if ((state.name !== 'linked' && state.name !== 'synced') || state.session !== session) return
    for (const resolve of confirmations.splice(0)) resolve()
    socket.confirmed()
    const status = session.unsent ? 'read_only' : 'synced'
    if (state.name === 'synced') {
      if (status === 'read_only') setStatus(status)
      return
    }
    state = { name: 'synced', session, channel: state.channel }
    attempt = 0
    refusals = 0
    oversize = 0
    failing = undefined
    setStatus(status)
  }

  function onEnd(session: RelaySession, end: SessionEnd): void {
    if ((state.name !== 'linked' && state.name !== 'synced') || state.session !== session) return
    const wasSynced = state.name === 'synced'
    state = { name: 'down' }
    if (!socket.up || end.code === ClientCloseCode.abandoned) {
      // The relay closed the socket over a frame too big, and this document sent the largest: it waits its own backoff.
      if (end.code === CloseCode.messageTooBig && socketEnd?.largestRoom === room) {
        oversize = end.largestIndivisible ? oversize + 1 : 0
        if (oversize >= OVERSIZE_BEFORE_ERROR) report('frame_too_large', frameTooLargeError(projectId, end.largestFrame))
        between()
        return retry()
      }
      return between() // the socket went down: `up` opens it again
    }
    const permanent = PERMANENT.get(end.code)
    if (permanent !== undefined || (isPermanentCloseCode(end.code) && !RETRIED.has(end.code))) {
      go({ name: 'refused' })
      for (const resolve of confirmations.splice(0)) resolve()
      const code = permanent === 'unauthorized' ? 'unauthorized' : end.code === CloseCode.documentTooLarge ? 'quota_exceeded' : 'internal'
      report(permanent ?? 'refused', new MemoryError(code, `The relay refused room ${room}: close code ${end.code} ${end.reason}`.trim()))
      return
    }
    if (end.code === CloseCode.roomQuotaExceeded || end.code === CloseCode.byteQuotaExceeded) {
      report(
        'relay_refused',
        new MemoryError(
          'quota_exceeded',
          end.code === CloseCode.roomQuotaExceeded
            ? `The relay refused room ${room}: this user already has as many documents open as it allows (maxDocumentsPerUser, close code 4405); retrying with backoff`
            : `The relay refused a change of room ${room}: this user stores as many bytes as it allows (maxBytesPerUser, close code 4407); retrying with backoff`,
        ),
      )
    } else if (end.code !== CloseCode.documentDropped && !wasSynced) {
      refusals++
      if (refusals >= REFUSALS_BEFORE_ERROR)
        report(
          'relay_refused',
          new MemoryError(
            'internal',
            `The relay refused room ${room} ${refusals} times in a row before it synced (last close code ${end.code} ${end.reason}); retrying with backoff`.trim(),
          ),
        )
    }
    between()
    retry()
  }

  function retry(): void {
    attempt++
    const timer = backoffTimer(attempt, options.backoff, (fired) => {
      if (state.name !== 'waiting' || state.timer !== fired) return
      state = { name: 'down' }
      open()
    })
    go({ name: 'waiting', timer })
  }

  const unregister = socket.register(room, {
    up() {
      if (state.name === 'down') open()
    },
    down(end) {
      if (state.name === 'linked' || state.name === 'synced') {
        // The channel ends with the socket's code: the session reports what it sent (onEnd).
        socketEnd = end
        try {
          state.channel.end(end.code, end.reason)
        } finally {
          socketEnd = undefined
        }
        return
      }
      // A document backing off keeps its own timer; it opens once the socket is up again.
      if (state.name === 'down') between()
    },
    frame(frame) {
      if (state.name !== 'linked' && state.name !== 'synced') return
      if (frame.type === 'message') state.channel.deliver(frame.message)
      else if (frame.type === 'refused') state.channel.end(frame.code, frame.reason)
    },
    connecting() {
      if (state.name === 'down' && failing === undefined) setStatus('connecting')
    },
    failure(failure) {
      if (state.name === 'down') between(failure)
      if (failure?.permanent) for (const resolve of confirmations.splice(0)) resolve()
    },
  })

  return {
    syncsClock: true,
    confirm() {
      return new Promise<void>((resolve) => {
        if (state.name === 'destroyed' || state.name === 'refused' || socket.failure?.permanent) return resolve()
        confirmations.push(resolve)
        if (state.name === 'synced') state.session.confirm()
      })
    },
    async drop() {
      const code = await socket.drop(room)
      if (code !== 0 && code !== ClientCloseCode.abandoned)
        throw new MemoryError(code === CloseCode.roomForbidden ? 'unauthorized' : 'internal', `The relay did not delete room ${room}: close code ${code}`)
    },
    destroy() {
      if (state.name === 'destroyed') return
      go({ name: 'destroyed' })
      for (const resolve of confirmations.splice(0)) resolve()
      unregister()
    },
  }
}
