import { MemoryError } from '@engram/core'
import { ClientCloseCode, CloseCode, isPermanentCloseCode } from './close-codes.js'
import { isOnline } from './network.js'
import {
  backoffTimer,
  DEAD_AFTER_BEATS,
  frameTooLargeError,
  halvedFrameLimit,
  OVERSIZE_BEFORE_ERROR,
  REFUSALS_BEFORE_ERROR,
  type RelayLinkOptions,
  type ResolvedTransport,
  requestToken,
  resolveTransport,
  TOKEN_CODES,
  UNREACHABLE_BEFORE_ERROR,
  unreachableError,
  watchLink,
} from './reconnect.js'
import { openRelaySession, type RelaySession, type SessionEnd } from './relay-session.js'
import type { Connection, Connector, ConnectorContext, SyncErrorReason } from './sync-types.js'

export { DEFAULT_MAX_FRAME_BYTES } from './reconnect.js'

/** The close code of a frame over the relay's limit. */
const MESSAGE_TOO_BIG = CloseCode.messageTooBig
/** Refusals that retrying cannot fix, and how the app learns why. */
const PERMANENT: ReadonlyMap<number, SyncErrorReason> = new Map([
  [CloseCode.malformedMessage, 'refused'],
  [CloseCode.roomForbidden, 'unauthorized'],
  [CloseCode.roomInvalid, 'refused'],
  [CloseCode.documentTooLarge, 'document_too_large'],
])

/** Options of {@link websocketConnector}: the room's socket opens `<url>/<room>`. */
export type WebsocketConnectorOptions = RelayLinkOptions

/**
 * The connector's states, one place for every transition:
 * - `authorizing`: waiting for `token()`;
 * - `linked`: a socket is open or opening and the relay does not yet hold everything;
 * - `synced`: the relay confirmed it holds everything sent;
 * - `waiting`: backing off before the next attempt;
 * - `offline`: the network is down, no attempts until it is back;
 * - `refused`: the relay refused the room for good (44xx), no more attempts;
 * - `destroyed`.
 */
type State =
  | { name: 'authorizing'; attemptId: number }
  | { name: 'linked'; session: RelaySession; since: number }
  | { name: 'synced'; session: RelaySession }
  | { name: 'waiting'; timer: ReturnType<typeof setTimeout> }
  | { name: 'offline' }
  | { name: 'refused' }
  | { name: 'destroyed' }

/**
 * Connects project documents to the relay over the y-websocket protocol. It
 * fetches a fresh token before every attempt (tokens expire) and waits a
 * jittered backoff between attempts; the backoff only resets once the relay
 * confirmed it holds everything, so a relay that keeps refusing is not
 * hammered (nor is `token()`). What is sent is split into frames under the
 * frame limit, which halves whenever the relay closes with 1009 (message too
 * big). Refusals that a retry cannot fix (44xx other than the token codes) end
 * in 'error'; repeated refusals of other kinds show 'error' with a reason while
 * retries go on, and so does a relay whose socket does not open on several
 * attempts in a row while the network is up (`unreachable`, not 'offline').
 *
 * Network awareness: on the global `offline` event (or `navigator.onLine`
 * turning false, read every second) the project reports 'offline' and the
 * socket is closed (a browser may keep a dead socket open); on `online` it
 * reconnects at once with a fresh token, skipping the backoff.
 * Liveness: every `heartbeatMs` the connector asks the relay for awareness
 * states; a socket that received nothing for 2.5 heartbeats (or that has been
 * connecting that long) is closed and retried.
 */
export function websocketConnector(options: WebsocketConnectorOptions): Connector {
  const transport = resolveTransport(options)
  const base = options.url.replace(/\/+$/, '')
  return (ctx) => connectProject(ctx, { ...options, ...transport, base })
}

type ProjectLinkOptions = Omit<WebsocketConnectorOptions, 'network' | 'heartbeatMs'> & ResolvedTransport & { base: string }

function connectProject({ doc, room, projectId, setStatus, beforeSync, relayTime }: ConnectorContext, options: ProjectLinkOptions): Connection {
  let state: State = { name: 'offline' }
  /** Attempts since the last confirmed sync (drives the backoff). */
  let attempt = 0
  let refusals = 0
  let unreachable = 0
  let oversize = 0
  let frameBytes = options.initialFrameBytes
  let attemptIds = 0
  /** Waiting for the relay to confirm what was sent (a later confirmed sync of a new connection also does). */
  const confirmations: Array<() => void> = []
  /** Set while the project shows 'error' for a failure that retries may still cure. */
  let failing: SyncErrorReason | undefined
  let failure: MemoryError | undefined

  const report = (reason: SyncErrorReason, error: MemoryError): void => {
    const first = failing !== reason
    failing = reason
    failure = error
    setStatus('error', error, reason)
    if (first) options.onError?.(error, projectId)
  }
  /** The status between attempts: 'error' stays until a sync succeeds (told again: the link is down). */
  const between = (): void => {
    if (failing === undefined) setStatus('offline')
    else setStatus('error', failure, failing)
  }

  function go(next: State): void {
    const prev = state
    state = next
    if (prev.name === 'waiting') clearTimeout(prev.timer)
    // Set first: the abandoned session's end report then finds it is no longer current.
    if ((prev.name === 'linked' || prev.name === 'synced') && next.name !== 'linked' && next.name !== 'synced') prev.session.abandon('left')
  }

  function attemptNow(): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    if (options.network !== undefined && !isOnline(options.network)) {
      go({ name: 'offline' })
      setStatus('offline')
      return
    }
    // While retrying the project stays 'offline' (no flicker through 'connecting' on every attempt).
    if (attempt === 0 && failing === undefined) setStatus('connecting')
    const attemptId = ++attemptIds
    go({ name: 'authorizing', attemptId })
    requestToken(options.token, (token) => {
      if (state.name !== 'authorizing' || state.attemptId !== attemptId) return
      if (typeof token === 'string') onToken(token)
      else {
        report('token', token)
        retry()
      }
    })
  }

  function onToken(token: string): void {
    const url = `${options.base}/${room}?token=${encodeURIComponent(token)}`
    const session = openRelaySession({
      doc,
      url,
      WebSocket: options.WebSocketImpl,
      maxFrameBytes: () => frameBytes,
      events: {
        onConfirmed: () => onConfirmed(session),
        onEnd: (end) => onEnd(session, end),
        // The clock learns the relay's time before this side's state goes out.
        ...(beforeSync ? { beforeSync } : {}),
        ...(relayTime ? { relayTime } : {}),
        onUnsent: () => {
          if (state.name === 'synced' && state.session === session) setStatus('read_only')
        },
      },
    })
    go({ name: 'linked', session, since: Date.now() })
  }

  function onConfirmed(session: RelaySession): void {
    if ((state.name !== 'linked' && state.name !== 'synced') || state.session !== session) return
    for (const resolve of confirmations.splice(0)) resolve()
    // A read-only token: the relay confirms, but what it dropped is not there ('read_only' while this side holds it).
    const status = session.unsent ? 'read_only' : 'synced'
    if (state.name === 'synced') {
      if (status === 'read_only') setStatus(status)
      return
    }
    go({ name: 'synced', session })
    attempt = 0
    refusals = 0
    unreachable = 0
    oversize = 0
    failing = undefined
    failure = undefined
    setStatus(status)
  }

  function onEnd(session: RelaySession, end: SessionEnd): void {
    if ((state.name !== 'linked' && state.name !== 'synced') || state.session !== session) return
    const wasSynced = state.name === 'synced'
    state = { name: 'offline' } // the session is over: nothing to abandon
    const permanent = PERMANENT.get(end.code)
    if (permanent !== undefined || (isPermanentCloseCode(end.code) && !TOKEN_CODES.has(end.code))) {
      go({ name: 'refused' })
      for (const resolve of confirmations.splice(0)) resolve() // nothing more will be confirmed
      const code = permanent === 'unauthorized' ? 'unauthorized' : 'internal'
      report(permanent ?? 'refused', new MemoryError(code, `The relay refused room ${room}: close code ${end.code} ${end.reason}`.trim()))
      return
    }
    if (end.code === MESSAGE_TOO_BIG) {
      frameBytes = halvedFrameLimit(frameBytes, end.largestFrame)
      oversize = end.largestIndivisible ? oversize + 1 : 0
      if (oversize >= OVERSIZE_BEFORE_ERROR) report('frame_too_large', frameTooLargeError(projectId, end.largestFrame))
    }
    // The socket never opened while the network is up: the relay is down, or not at this URL.
    unreachable = end.opened ? 0 : unreachable + 1
    if (unreachable >= UNREACHABLE_BEFORE_ERROR && failing !== 'frame_too_large') report('unreachable', unreachableError(options.base, unreachable, end.reason))
    if (!wasSynced && end.opened && end.code !== ClientCloseCode.abandoned) {
      refusals++
      if (refusals >= REFUSALS_BEFORE_ERROR && TOKEN_CODES.has(end.code)) {
        report(
          'unauthorized',
          new MemoryError(
            'unauthorized',
            `The relay refused ${refusals} fresh tokens in a row for room ${room} (close code ${end.code} ${end.reason}); check what token() returns. Retrying with backoff`,
          ),
        )
      } else if (refusals >= REFUSALS_BEFORE_ERROR && failing !== 'frame_too_large') {
        report(
          'relay_refused',
          new MemoryError(
            'internal',
            `The relay closed the connection of room ${room} ${refusals} times in a row before it synced (last close code ${end.code} ${end.reason}); retrying with backoff`.trim(),
          ),
        )
      }
    }
    between()
    retry()
  }

  function retry(): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    attempt++
    const timer = backoffTimer(attempt, options.backoff, (fired) => {
      if (state.name === 'waiting' && state.timer === fired) attemptNow()
    })
    go({ name: 'waiting', timer })
  }

  function onNetwork(up: boolean): void {
    if (state.name === 'destroyed' || state.name === 'refused') return
    unreachable = 0
    if (!up) {
      // Offline explains an unreachable relay; once back online the attempts count again.
      if (failing === 'unreachable') failing = undefined
      go({ name: 'offline' })
      setStatus('offline')
      return
    }
    if (state.name !== 'offline' && state.name !== 'waiting') return
    attempt = 0
    attemptNow()
  }

  function heartbeat(): void {
    if (state.name !== 'linked' && state.name !== 'synced') return
    const { session } = state
    const quietSince = session.opened ? session.lastReceived : state.name === 'linked' ? state.since : session.lastReceived
    if (Date.now() - quietSince > options.heartbeatMs * DEAD_AFTER_BEATS) {
      session.abandon('no answer from the relay') // → onEnd → 'offline' and a retry with a fresh token
      return
    }
    if (session.opened) session.probe()
  }

  const unwatch = watchLink(options.network, onNetwork, options.heartbeatMs, heartbeat)
  attemptNow()

  return {
    syncsClock: true,
    confirm() {
      return new Promise<void>((resolve) => {
        if (state.name === 'destroyed' || state.name === 'refused') return resolve()
        confirmations.push(resolve)
        if (state.name === 'synced') state.session.confirm()
      })
    },
    destroy() {
      if (state.name === 'destroyed') return
      go({ name: 'destroyed' })
      for (const resolve of confirmations.splice(0)) resolve()
      unwatch()
    },
  }
}
