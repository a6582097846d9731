import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import * as Y from 'yjs'
import { ClientCloseCode, CloseCode } from './close-codes.js'
import { diffParts, splitTransaction, type UpdatePart } from './update-frames.js'

/** y-websocket message types and sync steps (y-protocols). */
const MESSAGE_SYNC = 0
const MESSAGE_AUTH = 2
const MESSAGE_QUERY_AWARENESS = 3
const STEP1 = 0
const STEP2 = 1
const UPDATE = 2
/**
 * Auth messages after y-protocols' `permission denied` (0), which the stock client reads and
 * ignores: the token's scope (2, a string as Hocuspocus sends it: 'readonly' or 'read-write')
 * and the relay's clock (3, epoch ms), sent before the relay's sync step 1 and again with
 * every answer to a heartbeat.
 */
const AUTH_DENIED = 0
const AUTH_SCOPE = 2
const AUTH_TIME = 3

/** How a session ended. */
export interface SessionEnd {
  /** The WebSocket close code (`CloseCode`), or a `ClientCloseCode` when this side abandoned the socket or a frame from the relay did not decode. */
  code: number
  reason: string
  /** Whether the socket opened at all (a refusal vs. an unreachable relay). */
  opened: boolean
  /** Largest frame sent, and whether it held one struct that cannot be split. */
  largestFrame: number
  largestIndivisible: boolean
}

/** What a session tells its owner. */
export interface SessionEvents {
  /**
   * The relay confirmed it holds everything sent so far (and this side has
   * what the relay had): first after the initial exchange, then after every
   * later confirmation asked for with {@link RelaySession.confirm} or needed by a split send.
   */
  onConfirmed(): void
  /** The socket closed or was abandoned; called once. */
  onEnd(end: SessionEnd): void
  /**
   * Called once per session before this side sends the relay its state, with the relay's time
   * (undefined when the relay does not send it); frames from the relay wait until it resolves.
   */
  beforeSync?(relayTime: number | undefined): Promise<void>
  /** A later reading of the relay's time (with the answer to a heartbeat). */
  relayTime?(relayTime: number): void
  /** The relay does not take this side's writes (read-only scope) and this side now holds changes the relay lacks. */
  onUnsent?(): void
}

/** One WebSocket to the relay for one document. */
export interface RelaySession {
  /** When the last frame arrived (or the session started). */
  readonly lastReceived: number
  readonly opened: boolean
  /** Sends a liveness probe the relay answers (query awareness). */
  probe(): void
  /** Asks the relay to confirm what was sent so far; `onConfirmed` follows. */
  confirm(): void
  /** The relay said the token may only read: it drops what this side sends. */
  readonly readOnly: boolean
  /** With {@link RelaySession.readOnly}: this side holds changes the relay lacks (they never reach it). */
  readonly unsent: boolean
  /** Closes the socket and reports the end at once (code 0). Idempotent. */
  abandon(reason: string): void
}

/**
 * What a session uses of a WebSocket: a browser or `ws` socket to one room, or one document's
 * channel on the multiplexed socket (mux-channel.ts).
 */
export interface SessionSocket {
  binaryType: string
  readonly readyState: number
  send(data: Uint8Array): void
  close(): void
  onopen: ((event: Event) => void) | null
  onmessage: ((event: MessageEvent) => void) | null
  onclose: ((event: CloseEvent) => void) | null
  onerror: ((event: Event) => void) | null
}

/** What opening a session needs: a socket, or the URL and WebSocket class to open one. */
export interface SessionOptions {
  doc: Y.Doc
  url: string
  WebSocket: new (url: string) => WebSocket
  /** The socket to speak over instead of `new WebSocket(url)`. */
  socket?: () => SessionSocket
  /** The frame limit in bytes, read at every send. */
  maxFrameBytes: () => number
  events: SessionEvents
}

/** Whether a frame is the relay's sync step 1. */
function isStep1(data: Uint8Array): boolean {
  const decoder = decoding.createDecoder(data)
  return decoding.readVarUint(decoder) === MESSAGE_SYNC && decoding.readVarUint(decoder) === STEP1
}

const frame = (write: (encoder: encoding.Encoder) => void): Uint8Array => {
  const encoder = encoding.createEncoder()
  write(encoder)
  return encoding.toUint8Array(encoder)
}

/**
 * Speaks the y-websocket protocol with the relay over one socket, with two
 * differences from the stock provider: what is sent is cut into frames under
 * `maxFrameBytes`, and 'synced' waits for proof that the relay holds it.
 *
 * The proof is a marker: after sending, the session sends sync step 1; the
 * relay answers every step 1 with a step 2, in order, after applying and
 * committing every earlier frame of the connection (and it closes the
 * connection instead when a frame is refused). So when the answer to the
 * last marker arrives, everything sent before it is on the relay.
 */
export function openRelaySession(options: SessionOptions): RelaySession {
  const { doc, events } = options
  const ws: SessionSocket = options.socket ? options.socket() : new options.WebSocket(options.url)
  ws.binaryType = 'arraybuffer'
  let ended = false
  let opened = false
  let lastReceived = Date.now()
  /** Markers sent and not answered yet. */
  let markers = 0
  /** The relay's step 1 was answered with everything it lacked. */
  let answered = false
  /** The initial exchange was confirmed. */
  let synced = false
  let largestFrame = 0
  let largestIndivisible = false
  let readOnly = false
  /** What the relay holds, per Yjs client: its step 1, then everything it sent since. */
  const relayState = new Map<number, number>()
  /** The clock check before the first exchange: frames from the relay wait behind it. */
  let gate: Promise<void> | undefined
  let gateDone = false
  let checked = false
  let probeSentAt: number | undefined

  const learnFrom = (stateVector: Map<number, number>): void => {
    for (const [client, clock] of stateVector) if (clock > (relayState.get(client) ?? 0)) relayState.set(client, clock)
  }
  /** Whether this side holds structs the relay lacks (only meaningful when it drops what this side sends). */
  const holdsUnsent = (): boolean => {
    for (const [client, clock] of Y.decodeStateVector(Y.encodeStateVector(doc))) if (clock > (relayState.get(client) ?? 0)) return true
    return false
  }
  /** Runs the clock check once, before this side sends its state: later frames wait for it. */
  const checkClock = (relayTime: number | undefined): void => {
    if (checked) return
    checked = true
    gate = Promise.resolve(events.beforeSync?.(relayTime))
      .catch(() => undefined)
      .then(() => {
        gateDone = true
      })
  }

  const send = (message: Uint8Array, indivisible = false): void => {
    if (ended || ws.readyState !== 1) return
    if (message.byteLength > largestFrame) {
      largestFrame = message.byteLength
      largestIndivisible = indivisible
    }
    ws.send(message)
  }
  const sendParts = (parts: readonly UpdatePart[], step: number): void => {
    for (const p of parts)
      send(
        frame((e) => {
          encoding.writeVarUint(e, MESSAGE_SYNC)
          encoding.writeVarUint(e, step)
          encoding.writeVarUint8Array(e, p.update)
        }),
        p.indivisible,
      )
  }
  const sendMarker = (): void => {
    markers++
    send(
      frame((e) => {
        encoding.writeVarUint(e, MESSAGE_SYNC)
        encoding.writeVarUint(e, STEP1)
        encoding.writeVarUint8Array(e, Y.encodeStateVector(doc))
      }),
    )
  }
  const checkConfirmed = (): void => {
    if (ended || !answered || markers > 0) return
    synced = true
    events.onConfirmed()
  }

  const onUpdate = (update: Uint8Array, origin: unknown, _doc: Y.Doc, tr: Y.Transaction): void => {
    // Before the relay's step 1 is answered, that answer (a diff) carries this change too.
    if (origin === session || ended || !answered) return
    const parts = splitTransaction(doc, update, tr, options.maxFrameBytes())
    sendParts(parts, UPDATE)
    // Until synced, every send needs its proof; afterwards a split change does (it is large).
    if (!synced || parts.length > 1) sendMarker()
    if (readOnly && synced) events.onUnsent?.()
  }

  function receiveAuth(decoder: decoding.Decoder): void {
    const kind = decoding.readVarUint(decoder)
    if (kind === AUTH_DENIED) end(CloseCode.roomForbidden, `permission denied: ${decoding.readVarString(decoder)}`)
    else if (kind === AUTH_SCOPE) readOnly = decoding.readVarString(decoder) === 'readonly'
    else if (kind === AUTH_TIME) {
      const relayTime = decoding.readVarUint(decoder)
      if (!checked) return checkClock(relayTime)
      // The relay read its clock between the probe and now: about half the round trip ago.
      const halfTrip = probeSentAt === undefined ? 0 : Math.max(0, (Date.now() - probeSentAt) / 2)
      probeSentAt = undefined
      events.relayTime?.(relayTime + halfTrip)
    }
  }

  function receive(data: Uint8Array): void {
    const decoder = decoding.createDecoder(data)
    const type = decoding.readVarUint(decoder)
    if (type === MESSAGE_AUTH) return receiveAuth(decoder)
    if (type !== MESSAGE_SYNC) return // awareness and its queries: only proof of life here
    const step = decoding.readVarUint(decoder)
    const payload = decoding.readVarUint8Array(decoder)
    if (step === STEP1) {
      learnFrom(Y.decodeStateVector(payload))
      sendParts(diffParts(doc, payload, options.maxFrameBytes()), STEP2)
      answered = true
      sendMarker()
      return
    }
    if (step === STEP2 || step === UPDATE) {
      learnFrom(Y.decodeStateVector(Y.encodeStateVectorFromUpdate(payload)))
      Y.applyUpdate(doc, payload, session)
    }
    if (step === STEP2) {
      markers = Math.max(0, markers - 1)
      checkConfirmed()
    }
  }

  function end(code: number, reason: string): void {
    if (ended) return
    ended = true
    doc.off('update', onUpdate)
    ws.onopen = ws.onmessage = ws.onclose = null
    // Closing a socket still connecting makes `ws` emit an error: heard and dropped, the end is reported already.
    ws.onerror = () => {}
    try {
      if (ws.readyState === 0 || ws.readyState === 1) ws.close()
    } catch {
      // already closing: nothing more to release
    }
    events.onEnd({ code, reason, opened, largestFrame, largestIndivisible })
  }

  ws.onopen = () => {
    opened = true
    lastReceived = Date.now()
    // The first marker: its answer brings what this side lacks.
    sendMarker()
  }
  /** Frames from the relay wait, in arrival order, behind the clock check (this side's state goes out after it). */
  let inbox: Promise<void> = Promise.resolve()
  let waiting = 0
  const handle = (data: Uint8Array): void => {
    if (ended) return
    try {
      receive(data)
    } catch (error) {
      end(ClientCloseCode.undecodableFrame, `undecodable frame from the relay: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  ws.onmessage = (event: MessageEvent) => {
    lastReceived = Date.now()
    const data = new Uint8Array(event.data as ArrayBuffer)
    try {
      // The relay's step 1 with no time before it: an older relay; the check runs without it.
      if (!checked && isStep1(data)) checkClock(undefined)
    } catch {
      // not decodable: handled (and refused) below
    }
    if (waiting === 0 && (gate === undefined || gateDone)) return handle(data)
    waiting++
    inbox = inbox
      .then(() => gate)
      .then(() => {
        waiting--
        handle(data)
      })
  }
  ws.onclose = (event: CloseEvent) => end(event.code, event.reason)
  ws.onerror = () => {
    /* 'close' follows with the code */
  }
  doc.on('update', onUpdate)

  const session: RelaySession = {
    get lastReceived() {
      return lastReceived
    },
    get opened() {
      return opened
    },
    get readOnly() {
      return readOnly
    },
    get unsent() {
      return readOnly && holdsUnsent()
    },
    probe() {
      probeSentAt ??= Date.now()
      send(frame((e) => encoding.writeVarUint(e, MESSAGE_QUERY_AWARENESS)))
    },
    confirm() {
      // Before the relay's step 1 is answered the pending markers confirm everything anyway.
      if (answered && !ended) sendMarker()
    },
    abandon(reason) {
      end(ClientCloseCode.abandoned, reason)
    },
  }
  return session
}
