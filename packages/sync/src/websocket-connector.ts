import { MemoryError } from '@engram/core'
import { WebsocketProvider } from 'y-websocket'
import { backoffDelay, type BackoffOptions } from './backoff.js'
import { defaultNetwork, isOnline, watchNetwork } from './network.js'
import type { Connector } from './sync-types.js'

/** Relay close codes after which a fresh token may help (missing, invalid, expired). */
const TOKEN_CODES = new Set([4401, 4402, 4419])

/** A socket that heard nothing for this many heartbeats is considered dead. */
const DEAD_AFTER_BEATS = 2.5

/** Options of {@link websocketConnector}. */
export interface WebsocketConnectorOptions {
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
  onError?: (error: unknown, projectId: string) => void
}

/**
 * Connects project documents to the relay with the stock y-websocket provider.
 * The provider's own reconnect loop is switched off: this connector fetches a
 * fresh token before every attempt (tokens expire) and waits a jittered
 * backoff between attempts. Refusals that a retry cannot fix (44xx other than
 * the token codes: malformed, foreign room, document too large) end in 'error'.
 *
 * Network awareness: on the global `offline` event (or `navigator.onLine`
 * turning false, read every second) the project reports 'offline' and the
 * socket is closed (a browser may keep a dead socket open); on `online` it
 * reconnects at once with a fresh token, skipping the backoff.
 * Liveness: every `heartbeatMs` the connector renews its awareness state,
 * which the relay echoes; a socket that received nothing for 2.5 heartbeats
 * (or that has been connecting that long) is closed and retried.
 */
export function websocketConnector(options: WebsocketConnectorOptions): Connector {
  const network = options.network === undefined ? defaultNetwork() : (options.network ?? undefined)
  const heartbeatMs = options.heartbeatMs ?? 5_000
  if (!Number.isFinite(heartbeatMs) || heartbeatMs < 0) throw new MemoryError('invalid_input', 'heartbeatMs must be a non-negative number')
  return ({ doc, room, projectId, setStatus }) => {
    const provider = new WebsocketProvider(options.url, room, doc, {
      connect: false,
      disableBc: true,
      params: {},
      ...(options.WebSocket === undefined ? {} : { WebSocketPolyfill: options.WebSocket as typeof WebSocket }),
      shouldReconnect: () => false,
    })
    let attempt = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    let destroyed = false
    let online = network === undefined ? true : isOnline(network)
    /** Bumped by every open() and by going offline: a stale open() does not connect. */
    let generation = 0
    let connectingSince = 0

    const cancelRetry = (): void => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    }

    const retry = (): void => {
      if (destroyed || !online || timer !== undefined) return
      attempt++
      timer = setTimeout(() => {
        timer = undefined
        void open()
      }, backoffDelay(attempt, options.backoff))
    }

    async function open(): Promise<void> {
      const mine = ++generation
      if (!online) {
        setStatus('offline')
        return
      }
      // While retrying the project stays 'offline' (no flicker through 'connecting' on every attempt).
      if (attempt === 0) setStatus('connecting')
      let token: string
      try {
        token = await options.token()
        if (typeof token !== 'string' || token === '') throw new MemoryError('unauthorized', 'sync token() must resolve to a non-empty string')
      } catch (error) {
        if (destroyed || mine !== generation) return
        setStatus('error', error)
        options.onError?.(error, projectId)
        retry()
        return
      }
      if (destroyed || mine !== generation || !online) return
      provider.params = { token }
      connectingSince = Date.now()
      provider.connect()
    }

    provider.on('sync', (synced: boolean) => {
      if (!synced || destroyed) return
      attempt = 0
      setStatus('synced')
    })
    provider.on('connection-close', (event: CloseEvent | null) => {
      // Take reconnecting away from the provider: the next attempt needs a fresh token.
      provider.shouldConnect = false
      if (destroyed) return
      const code = event?.code
      if (code !== undefined && code >= 4400 && code < 4500 && !TOKEN_CODES.has(code)) {
        const error = new MemoryError(code === 4403 ? 'unauthorized' : 'internal', `The relay refused room ${room}: close code ${code} ${event?.reason ?? ''}`.trim())
        setStatus('error', error)
        options.onError?.(error, projectId)
        return
      }
      setStatus('offline')
      retry()
    })

    const onOffline = (): void => {
      if (destroyed || !online) return
      online = false
      generation++
      cancelRetry()
      setStatus('offline')
      if (provider.ws !== null) provider.disconnect()
    }
    const onOnline = (): void => {
      if (destroyed || online) return
      online = true
      cancelRetry()
      attempt = 0
      void open()
    }
    const unwatch = network ? watchNetwork(network, (up) => (up ? onOnline() : onOffline())) : undefined

    const heartbeat = heartbeatMs > 0 ? setInterval(() => {
      if (destroyed || provider.ws === null) return
      const deadAfter = heartbeatMs * DEAD_AFTER_BEATS
      const quietSince = provider.wsconnected ? provider.wsLastMessageReceived : connectingSince
      if (Date.now() - quietSince > deadAfter) {
        provider.disconnect() // → 'connection-close' → 'offline' and a retry with a fresh token
        return
      }
      // The relay echoes awareness to its sender: the answer proves the socket alive.
      if (provider.wsconnected) provider.awareness.setLocalState(provider.awareness.getLocalState())
    }, heartbeatMs) : undefined
    ;(heartbeat as { unref?: () => void } | undefined)?.unref?.()

    void open()
    return {
      destroy() {
        destroyed = true
        cancelRetry()
        if (heartbeat !== undefined) clearInterval(heartbeat)
        unwatch?.()
        provider.destroy()
      },
    }
  }
}
