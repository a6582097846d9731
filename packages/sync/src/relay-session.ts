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
  /** Closes the socket and reports the end at once (code 0). Idempotent. */
  abandon(reason: string): void
}

/** What opening a session needs. */
export interface SessionOptions {
  doc: Y.Doc
  url: string
  WebSocket: new (url: string) => WebSocket
  /** The frame limit in bytes, read at every send. */
  maxFrameBytes: () => number
  events: SessionEvents
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
  const ws = new options.WebSocket(options.url)
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
  }

  function receive(data: Uint8Array): void {
    const decoder = decoding.createDecoder(data)
    const type = decoding.readVarUint(decoder)
    if (type === MESSAGE_AUTH) {
      const denied = decoding.readVarUint(decoder) === 0
      if (denied) end(CloseCode.roomForbidden, `permission denied: ${decoding.readVarString(decoder)}`)
      return
    }
    if (type !== MESSAGE_SYNC) return // awareness and its queries: only proof of life here
    const step = decoding.readVarUint(decoder)
    const payload = decoding.readVarUint8Array(decoder)
    if (step === STEP1) {
      sendParts(diffParts(doc, payload, options.maxFrameBytes()), STEP2)
      answered = true
      sendMarker()
      return
    }
    if (step === STEP2 || step === UPDATE) Y.applyUpdate(doc, payload, session)
    if (step === STEP2) {
      markers = Math.max(0, markers - 1)
      checkConfirmed()
    }
  }

  function end(code: number, reason: string): void {
    if (ended) return
    ended = true
    doc.off('update', onUpdate)
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
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
  ws.onmessage = (event: MessageEvent) => {
    lastReceived = Date.now()
    try {
      receive(new Uint8Array(event.data as ArrayBuffer))
    } catch (error) {
      end(ClientCloseCode.undecodableFrame, `undecodable frame from the relay: ${error instanceof Error ? error.message : String(error)}`)
    }
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
    probe() {
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
