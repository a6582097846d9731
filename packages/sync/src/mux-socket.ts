import { MemoryError } from '@engram/core'
import type { BackoffOptions } from './backoff.js'
import { ClientCloseCode, CloseCode, isPermanentCloseCode } from './close-codes.js'
import { decodeMuxFrame, encodeMuxFrame, MUX_PATH, type MuxFrame } from './mux-frames.js'
import { isOnline } from './network.js'
import {
  backoffTimer,
  DEAD_AFTER_BEATS,
  halvedFrameLimit,
  MIN_FRAME_BYTES,
  REFUSALS_BEFORE_ERROR,
  requestToken,
  TOKEN_CODES,
  UNREACHABLE_BEFORE_ERROR,
  unreachableError,
  watchLink,
} from './reconnect.js'
import type { SyncErrorReason } from './sync-types.js'

/** How long the socket stays open after its last document closed (a document often opens again at once). */
const LINGER_MS = 1_000

/** Why the multiplexed socket is down, for the documents to show. */
export interface MuxFailure {
  reason: SyncErrorReason
  error: MemoryError
  /** No more attempts (a refusal that retrying cannot fix). */
  permanent: boolean
}

/** How the socket went down, as a document's channel reports it. */
export interface MuxDown {
  code: number
  reason: string
  /** Whether the socket had opened. */
  opened: boolean
  /** The largest frame sent on the socket, and the document that sent it (a 1009 names no document: that one is the likely cause). */
  largestFrame: number
  largestRoom?: string | undefined
}

/** A document's side of the socket: what the socket tells it. */
export interface MuxEndpoint {
  /** The socket is up and has read the relay's time: the document may open. */
  up(): void
  /** The socket went down (or was never up): every channel of the document is over. */
  down(end: MuxDown): void
  /** A frame of the relay for this document. */
  frame(frame: Exclude<MuxFrame, { type: 'time' | 'ping' | 'open' | 'close' | 'drop' }>): void
  /** The socket's failure changed (undefined: none); the document shows it while it is not linked. */
  failure(failure: MuxFailure | undefined): void
  /** A first attempt (not a retry) to open the socket starts. */
  connecting(): void
}

/** Options of {@link createMuxSocket}. */
export interface MuxSocketOptions {
  /** Relay base URL, without the path. */
  base: string
  token: () => Promise<string>
  WebSocketImpl: new (url: string) => WebSocket
  backoff?: BackoffOptions | undefined
  network: EventTarget | undefined
  heartbeatMs: number
  initialFrameBytes: number
  /** Takes a reading of the relay's time; frames from the relay wait for the first of each socket. */
  clock?: ((relayTime: number) => Promise<void>) | undefined
  onError?: ((error: unknown) => void) | undefined
}

/** The device's one socket to the relay, shared by every document. */
export interface MuxSocket {
  /** Adds a document; the socket opens while at least one is registered. @returns the unregister function. */
  register(room: string, endpoint: MuxEndpoint): () => void
  /** Whether the socket is up (open and past the relay's time). */
  readonly up: boolean
  readonly failure: MuxFailure | undefined
  /** Largest y-websocket message a document may send (the frame limit less the room name's share). */
  frameBytes(room: string): number
  /** Sends one frame now (dropped while the socket is not up). */
  send(frame: MuxFrame): void
  /**
   * Asks the relay to delete `room` (its owner purged it); waits for the socket to be up.
   * Resolves with the relay's answer (0 done, else a close code); with `ClientCloseCode.abandoned` when the socket is destroyed
   * (or refused for good) first.
   */
  drop(room: string): Promise<number>
  /** A document on the socket confirmed that the relay holds what it sent: the backoff starts over. */
  confirmed(): void
  /** Sockets opened so far (benchmarks, tests). */
  readonly opened: number
  destroy(): void
}

/**
 * The socket's states, one place for every transition:
 * - `idle`: no document is registered, no socket;
 * - `authorizing`: waiting for `token()`;
 * - `connecting`: the socket is opening, or open and waiting for the relay's time (and the clock);
 * - `up`: documents may open;
 * - `waiting`: backing off before the next attempt;
 * - `offline`: the network is down;
 * - `refused`: the relay refused the socket for good;
 * - `destroyed`.
 */
type State =
  | { name: 'idle' }
  | { name: 'authorizing'; attemptId: number }
  | { name: 'connecting'; ws: WebSocket; opened: boolean }
  | { name: 'up'; ws: WebSocket }
  | { name: 'waiting'; timer: ReturnType<typeof setTimeout> }
  | { name: 'offline' }
  | { name: 'refused' }
  | { name: 'destroyed' }

/**
 * Opens and keeps the device's one WebSocket to the relay's `/mux`
 * endpoint: a fresh token before every attempt, the jittered backoff between
 * attempts (reset once a document on it confirmed a sync), `online` / `offline` events, a
 * heartbeat (`ping`, answered with the relay's time; a socket silent for 2.5
 * beats is closed and retried), and the frame limit halved on every 1009.
 * The relay's time comes first on every socket: no frame of the relay is
 * handled (nor any document opened) before `clock` has taken it.
 */
export function createMuxSocket(options: MuxSocketOptions): MuxSocket {
  const endpoints = new Map<string, MuxEndpoint>()
  const drops = new Map<string, Array<(code: number) => void>>()
  let state: State = { name: 'idle' }
  let attempt = 0
  let attemptIds = 0
  let refusals = 0
  let unreachable = 0
  let frameLimit = options.initialFrameBytes
  let failure: MuxFailure | undefined
  let lastReceived = Date.now()
  let pingSentAt: number | undefined
  let opened = 0
  /** Largest frame sent on the current socket. */
  let largestSent = 0
  let largestRoom: string | undefined
  let linger: ReturnType<typeof setTimeout> | undefined

  /** Whether a document or a drop needs the socket. */
  const needed = (): boolean => endpoints.size > 0 || drops.size > 0

  const setFailure = (next: MuxFailure | undefined): void => {
    const first = next !== undefined && failure?.reason !== next.reason
    failure = next
    for (const endpoint of [...endpoints.values()]) endpoint.failure(next)
    if (first) options.onError?.(next.error)
  }

  function go(next: State): void {
    const prev = state
    state = next
    if (prev.name === 'waiting') clearTimeout(prev.timer)
    if ((prev.name === 'connecting' || prev.name === 'up') && next.name !== 'connecting' && next.name !== 'up') {
      letGo(prev.ws)
      const down: MuxDown = {
        code: ClientCloseCode.abandoned,
        reason: 'left',
        opened: prev.name === 'up' || prev.opened,
        largestFrame: largestSent,
        largestRoom,
      }
      if (prev.name === 'up') for (const endpoint of [...endpoints.values()]) endpoint.down(down)
    }
  }

  function attemptNow(): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    if (!needed()) return go({ name: 'idle' })
    if (options.network !== undefined && !isOnline(options.network)) return go({ name: 'offline' })
    const attemptId = ++attemptIds
    go({ name: 'authorizing', attemptId })
    // While retrying the documents stay 'offline' (no flicker through 'connecting' on every attempt).
    if (attempt === 0 && failure === undefined) for (const endpoint of [...endpoints.values()]) endpoint.connecting()
    requestToken(options.token, (token) => {
      if (state.name !== 'authorizing' || state.attemptId !== attemptId) return
      if (typeof token === 'string') onToken(token)
      else {
        setFailure({ reason: 'token', error: token, permanent: false })
        retry()
      }
    })
  }

  function onToken(token: string): void {
    const ws = new options.WebSocketImpl(`${options.base}${MUX_PATH}?token=${encodeURIComponent(token)}`)
    ws.binaryType = 'arraybuffer'
    opened++
    largestSent = 0
    largestRoom = undefined
    const current = { name: 'connecting' as const, ws, opened: false }
    go(current)
    lastReceived = Date.now()
    /** Frames wait, in arrival order, behind the clock's reading of the relay's first frame. */
    let inbox: Promise<void> = Promise.resolve()
    let waiting = 0
    let timeRead = false
    let gateDone = false
    ws.onopen = () => {
      current.opened = true
      lastReceived = Date.now()
    }
    const handle = (data: Uint8Array): void | Promise<void> => {
      if (state.name !== 'up' && (state.name !== 'connecting' || state.ws !== ws)) return
      let frame: MuxFrame
      try {
        frame = decodeMuxFrame(data)
      } catch (error) {
        return end(ws, ClientCloseCode.undecodableFrame, `undecodable frame from the relay: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (!timeRead) {
        if (frame.type !== 'time') return end(ws, ClientCloseCode.undecodableFrame, `the relay's first frame on /mux must be its time, got ${frame.type}`)
        timeRead = true
        return Promise.resolve(options.clock?.(frame.time))
          .catch((error: unknown) => options.onError?.(error))
          .then(() => {
            gateDone = true
            becomeUp(ws)
          })
      }
      receive(frame)
    }
    ws.onmessage = (event: MessageEvent) => {
      lastReceived = Date.now()
      const data = new Uint8Array(event.data as ArrayBuffer)
      // Past the clock's reading and with nothing queued, a frame is handled at once.
      if (gateDone && waiting === 0) return void handle(data)
      waiting++
      inbox = inbox.then(() => {
        waiting--
        return handle(data)
      })
    }
    ws.onclose = (event: CloseEvent) => end(ws, event.code, event.reason)
    ws.onerror = () => {
      /* 'close' follows with the code */
    }
  }

  function becomeUp(ws: WebSocket): void {
    if (state.name !== 'connecting' || state.ws !== ws) return
    go({ name: 'up', ws })
    // The backoff resets once a document confirmed a sync (confirmed()): a socket the relay closes at once keeps backing off.
    refusals = 0
    unreachable = 0
    if (failure !== undefined) setFailure(undefined)
    for (const room of drops.keys()) ws.send(encodeMuxFrame({ type: 'drop', room }))
    for (const endpoint of [...endpoints.values()]) endpoint.up()
  }

  function receive(frame: MuxFrame): void {
    switch (frame.type) {
      case 'time': {
        // The relay read its clock between the ping and now: about half the round trip ago.
        const halfTrip = pingSentAt === undefined ? 0 : Math.max(0, (Date.now() - pingSentAt) / 2)
        pingSentAt = undefined
        void Promise.resolve(options.clock?.(frame.time + halfTrip)).catch((error: unknown) => options.onError?.(error))
        return
      }
      case 'dropped': {
        const waiting = drops.get(frame.room)
        drops.delete(frame.room)
        for (const resolve of waiting ?? []) resolve(frame.code)
        return
      }
      case 'message':
      case 'refused':
        endpoints.get(frame.room)?.frame(frame)
        return
      default:
        // Frames only a client sends: ignored.
        return
    }
  }

  function end(ws: WebSocket, code: number, reason: string): void {
    if ((state.name !== 'connecting' && state.name !== 'up') || state.ws !== ws) return
    const wasUp = state.name === 'up'
    const wasOpened = state.name === 'up' || state.opened
    letGo(ws)
    state = { name: 'offline' }
    const down: MuxDown = { code, reason, opened: wasOpened, largestFrame: largestSent, largestRoom }
    if (wasUp) for (const endpoint of [...endpoints.values()]) endpoint.down(down)
    if (isPermanentCloseCode(code) && !TOKEN_CODES.has(code)) {
      go({ name: 'refused' })
      setFailure({
        reason: code === CloseCode.roomForbidden || code === CloseCode.tokenRevoked ? 'unauthorized' : 'refused',
        error: new MemoryError(
          code === CloseCode.tokenRevoked ? 'unauthorized' : 'internal',
          `The relay refused the connection: close code ${code} ${reason}`.trim(),
        ),
        permanent: true,
      })
      for (const waiting of drops.values()) for (const resolve of waiting) resolve(ClientCloseCode.abandoned)
      drops.clear()
      return
    }
    // The relay's limit is below the largest frame sent: halve what was sent.
    if (code === CloseCode.messageTooBig) frameLimit = halvedFrameLimit(frameLimit, largestSent || frameLimit)
    unreachable = wasOpened ? 0 : unreachable + 1
    if (unreachable >= UNREACHABLE_BEFORE_ERROR)
      setFailure({ reason: 'unreachable', error: unreachableError(options.base, unreachable, reason), permanent: false })
    if (!wasUp && wasOpened) {
      refusals++
      if (refusals >= REFUSALS_BEFORE_ERROR) {
        const token = TOKEN_CODES.has(code)
        setFailure({
          reason: token ? 'unauthorized' : 'relay_refused',
          error: new MemoryError(
            token ? 'unauthorized' : 'internal',
            token
              ? `The relay refused ${refusals} fresh tokens in a row (close code ${code} ${reason}); check what token() returns. Retrying with backoff`
              : `The relay closed the connection ${refusals} times in a row before it was up (last close code ${code} ${reason}); retrying with backoff`.trim(),
          ),
          permanent: false,
        })
      }
    }
    retry()
  }

  function retry(): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    if (!needed()) return go({ name: 'idle' })
    attempt++
    const timer = backoffTimer(attempt, options.backoff, (fired) => {
      if (state.name === 'waiting' && state.timer === fired) attemptNow()
    })
    go({ name: 'waiting', timer })
  }

  function onNetwork(online: boolean): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    unreachable = 0
    if (!online) {
      if (failure?.reason === 'unreachable') setFailure(undefined)
      const wasUp = state.name === 'up'
      go({ name: 'offline' })
      if (!wasUp)
        for (const endpoint of [...endpoints.values()]) endpoint.down({ code: ClientCloseCode.abandoned, reason: 'offline', opened: false, largestFrame: 0 })
      return
    }
    if (state.name !== 'offline' && state.name !== 'waiting') return
    attempt = 0
    attemptNow()
  }

  function heartbeat(): void {
    if (state.name !== 'up' && state.name !== 'connecting') return
    if (Date.now() - lastReceived > options.heartbeatMs * DEAD_AFTER_BEATS) return end(state.ws, ClientCloseCode.abandoned, 'no answer from the relay')
    if (state.name === 'up') {
      pingSentAt ??= Date.now()
      state.ws.send(encodeMuxFrame({ type: 'ping' }))
    }
  }

  const unwatch = watchLink(options.network, onNetwork, options.heartbeatMs, heartbeat)

  return {
    register(room, endpoint) {
      if (state.name === 'destroyed') throw new MemoryError('closed', 'Sync is closed')
      if (endpoints.has(room)) throw new MemoryError('conflict', `Room ${room} is already open on this socket`)
      endpoints.set(room, endpoint)
      if (linger !== undefined) clearTimeout(linger)
      linger = undefined
      if (failure !== undefined) endpoint.failure(failure)
      if (state.name === 'idle') attemptNow()
      else if ((state.name === 'authorizing' || state.name === 'connecting') && failure === undefined) endpoint.connecting()
      else if (state.name === 'up') queueMicrotask(() => endpoints.get(room) === endpoint && state.name === 'up' && endpoint.up())
      else if (state.name === 'offline' || state.name === 'refused')
        endpoint.down({ code: ClientCloseCode.abandoned, reason: state.name, opened: false, largestFrame: 0 })
      return () => {
        if (endpoints.get(room) !== endpoint) return
        endpoints.delete(room)
        if (state.name === 'up') state.ws.send(encodeMuxFrame({ type: 'close', room }))
        if (endpoints.size === 0 && drops.size === 0 && linger === undefined) {
          linger = setTimeout(() => {
            linger = undefined
            if (endpoints.size === 0 && drops.size === 0 && state.name !== 'destroyed' && state.name !== 'refused') go({ name: 'idle' })
          }, LINGER_MS)
          ;(linger as { unref?: () => void }).unref?.()
        }
      }
    },
    get up() {
      return state.name === 'up'
    },
    get failure() {
      return failure
    },
    frameBytes(room) {
      return Math.max(MIN_FRAME_BYTES / 2, frameLimit - 16 - 3 * room.length)
    },
    send(frame) {
      if (state.name !== 'up' || state.ws.readyState !== 1) return
      const bytes = encodeMuxFrame(frame)
      if (bytes.byteLength > largestSent) {
        largestSent = bytes.byteLength
        largestRoom = 'room' in frame ? frame.room : undefined
      }
      state.ws.send(bytes)
    },
    drop(room) {
      return new Promise<number>((resolve) => {
        // A socket the relay refused for good never comes back: nothing will be dropped.
        if (state.name === 'destroyed' || state.name === 'refused') return resolve(ClientCloseCode.abandoned)
        let waiting = drops.get(room)
        if (!waiting) {
          drops.set(room, (waiting = []))
          if (state.name === 'up') state.ws.send(encodeMuxFrame({ type: 'drop', room }))
          else if (state.name === 'idle') attemptNow()
        }
        waiting.push(resolve)
      })
    },
    confirmed() {
      attempt = 0
    },
    get opened() {
      return opened
    },
    destroy() {
      if (state.name === 'destroyed') return
      go({ name: 'destroyed' })
      if (linger !== undefined) clearTimeout(linger)
      unwatch()
      for (const waiting of drops.values()) for (const resolve of waiting) resolve(ClientCloseCode.abandoned)
      drops.clear()
      endpoints.clear()
    },
  }
}

/** Stops listening to `ws` and closes it (a closing or closed socket stays as it is). */
function letGo(ws: WebSocket): void {
  ws.onopen = ws.onmessage = ws.onclose = null
  ws.onerror = () => {}
  try {
    if (ws.readyState === 0 || ws.readyState === 1) ws.close()
  } catch {
    // already closing
  }
}
