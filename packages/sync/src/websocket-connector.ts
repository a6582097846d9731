import { MemoryError } from '@engram/core'
import { WebsocketProvider } from 'y-websocket'
import { backoffDelay, type BackoffOptions } from './backoff.js'
import type { Connector } from './sync-types.js'

/** Relay close codes after which a fresh token may help (missing, invalid, expired). */
const TOKEN_CODES = new Set([4401, 4402, 4419])

/** Options of {@link websocketConnector}. */
export interface WebsocketConnectorOptions {
  url: string
  token: () => Promise<string>
  WebSocket?: unknown
  backoff?: BackoffOptions
  onError?: (error: unknown, projectId: string) => void
}

/**
 * Connects project documents to the relay with the stock y-websocket provider.
 * The provider's own reconnect loop is switched off: this connector fetches a
 * fresh token before every attempt (tokens expire) and waits a jittered
 * backoff between attempts. Refusals that a retry cannot fix (44xx other than
 * the token codes: malformed, foreign room, document too large) end in 'error'.
 */
export function websocketConnector(options: WebsocketConnectorOptions): Connector {
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

    const retry = (): void => {
      if (destroyed || timer !== undefined) return
      attempt++
      timer = setTimeout(() => {
        timer = undefined
        void open()
      }, backoffDelay(attempt, options.backoff))
    }

    async function open(): Promise<void> {
      // While retrying the project stays 'offline' (no flicker through 'connecting' on every attempt).
      if (attempt === 0) setStatus('connecting')
      let token: string
      try {
        token = await options.token()
        if (typeof token !== 'string' || token === '') throw new MemoryError('unauthorized', 'sync token() must resolve to a non-empty string')
      } catch (error) {
        if (destroyed) return
        setStatus('error', error)
        options.onError?.(error, projectId)
        retry()
        return
      }
      if (destroyed) return
      provider.params = { token }
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

    void open()
    return {
      destroy() {
        destroyed = true
        if (timer !== undefined) clearTimeout(timer)
        provider.destroy()
      },
    }
  }
}
