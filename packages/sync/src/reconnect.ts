import { MemoryError } from '@engram/core'
import { backoffDelay, type BackoffOptions } from './backoff.js'
import { CloseCode } from './close-codes.js'
import { defaultNetwork, watchNetwork } from './network.js'

/**
 * What a room's own socket (`websocket-connector.ts`) and the multiplexed one
 * (`mux-socket.ts`, `mux-connector.ts`) share: option checks, the token
 * fetched before every attempt, the backoff timer, the network watch and the
 * heartbeat, the frame limit halved on 1009, and the failures they report.
 */

/** Relay close codes after which a fresh token may help (missing, invalid, expired). */
export const TOKEN_CODES: ReadonlySet<number> = new Set([CloseCode.tokenMissing, CloseCode.tokenInvalid, CloseCode.tokenExpired])
/** A socket that heard nothing for this many heartbeats is considered dead. */
export const DEAD_AFTER_BEATS = 2.5
/** Default frame limit: under the relay's default `maxMessageBytes` of 1 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 1_000_000
/** The frame limit never shrinks below this. */
export const MIN_FRAME_BYTES = 16 * 1024
/** Connections the relay accepted and then closed before they synced (or were up), in a row, before status 'error'. */
export const REFUSALS_BEFORE_ERROR = 3
/** Attempts in a row whose socket never opened, with the network up, before status 'error' (`unreachable`). */
export const UNREACHABLE_BEFORE_ERROR = 3
/** 1009 refusals of a frame that held a single struct, in a row, before status 'error' (`frame_too_large`). */
export const OVERSIZE_BEFORE_ERROR = 2

/** The options both connectors take. */
export interface RelayLinkOptions {
  /** Relay URL (`wss://relay.example.com`). */
  url: string
  token: () => Promise<string>
  WebSocket?: unknown
  backoff?: BackoffOptions
  /**
   * Where `online` / `offline` events come from. Default: the global scope
   * (Window or WorkerGlobalScope) when it has `addEventListener`; `null` ignores them.
   */
  network?: EventTarget | null
  /** Liveness probe interval in ms (0 disables). Default 5,000. */
  heartbeatMs?: number
  /** Largest frame sent, in bytes (halved on every 1009 from the relay). Default 1,000,000. */
  maxFrameBytes?: number
  onError?: (error: unknown, projectId: string) => void
}

/** The transport part of {@link RelayLinkOptions}. */
type TransportOptions = Pick<RelayLinkOptions, 'WebSocket' | 'network' | 'heartbeatMs' | 'maxFrameBytes'>

/** {@link TransportOptions} checked, with their defaults. */
export interface ResolvedTransport {
  network: EventTarget | undefined
  heartbeatMs: number
  initialFrameBytes: number
  WebSocketImpl: new (url: string) => WebSocket
}

/** Checks the transport options (throws `invalid_input`) and fills in the defaults. */
export function resolveTransport(options: TransportOptions): ResolvedTransport {
  const network = options.network === undefined ? defaultNetwork() : (options.network ?? undefined)
  const heartbeatMs = options.heartbeatMs ?? 5_000
  if (!Number.isFinite(heartbeatMs) || heartbeatMs < 0) throw new MemoryError('invalid_input', 'heartbeatMs must be a non-negative number')
  const initialFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  if (!Number.isInteger(initialFrameBytes) || initialFrameBytes < MIN_FRAME_BYTES)
    throw new MemoryError('invalid_input', `maxFrameBytes must be an integer of at least ${MIN_FRAME_BYTES}`)
  const WebSocketImpl = (options.WebSocket ?? (globalThis as { WebSocket?: unknown }).WebSocket) as (new (url: string) => WebSocket) | undefined
  if (typeof WebSocketImpl !== 'function')
    throw new MemoryError('invalid_input', 'No WebSocket implementation: pass startSync({ WebSocket }) (the `ws` package in Node)')
  return { network, heartbeatMs, initialFrameBytes, WebSocketImpl }
}

/**
 * Calls `token()` (a microtask later) and hands `done` a non-empty token, or
 * the `MemoryError` to report: an app's error as it is when it is one, else
 * `unauthorized` with its message.
 */
export function requestToken(token: () => Promise<string>, done: (result: string | MemoryError) => void): void {
  void Promise.resolve()
    .then(() => token())
    .then(
      (value: unknown) =>
        done(typeof value === 'string' && value !== '' ? value : new MemoryError('unauthorized', 'sync token() must resolve to a non-empty string')),
      (error: unknown) =>
        done(
          error instanceof MemoryError
            ? error
            : new MemoryError('unauthorized', `sync token() failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
        ),
    )
}

/** Starts the backoff before attempt `attempt`; `fire` gets the timer so a state that moved on can tell it is stale. */
export function backoffTimer(
  attempt: number,
  backoff: BackoffOptions | undefined,
  fire: (timer: ReturnType<typeof setTimeout>) => void,
): ReturnType<typeof setTimeout> {
  const timer: ReturnType<typeof setTimeout> = setTimeout(() => fire(timer), backoffDelay(attempt, backoff))
  return timer
}

/**
 * Follows `network` (when there is one) and beats every `heartbeatMs` (when
 * above 0, without keeping Node alive). @returns the function that stops both.
 */
export function watchLink(network: EventTarget | undefined, onNetwork: (online: boolean) => void, heartbeatMs: number, heartbeat: () => void): () => void {
  const unwatch = network ? watchNetwork(network, onNetwork) : undefined
  const beat = heartbeatMs > 0 ? setInterval(heartbeat, heartbeatMs) : undefined
  ;(beat as { unref?: () => void } | undefined)?.unref?.()
  return () => {
    if (beat !== undefined) clearInterval(beat)
    unwatch?.()
  }
}

/** The frame limit after a 1009: half of the smaller of the limit and the largest frame sent, never below {@link MIN_FRAME_BYTES}. */
export function halvedFrameLimit(limit: number, largestSent: number): number {
  return Math.max(MIN_FRAME_BYTES, Math.floor(Math.min(limit, largestSent) / 2))
}

/** The relay's socket did not open on `attempts` attempts in a row while the network is up. */
export function unreachableError(base: string, attempts: number, lastReason: string): MemoryError {
  return new MemoryError(
    'internal',
    `The relay at ${base} cannot be reached (${attempts} attempts in a row${lastReason === '' ? '' : `, last: ${lastReason}`}); retrying with backoff`,
  )
}

/** One change of `projectId` (`bytes` long, one struct) is over the relay's message limit. */
export function frameTooLargeError(projectId: string, bytes: number): MemoryError {
  return new MemoryError(
    'quota_exceeded',
    `A single change of project ${projectId} (${bytes} bytes) is larger than the relay accepts in one message (close code 1009); make the value smaller or raise the relay's maxMessageBytes. Retrying.`,
  )
}
