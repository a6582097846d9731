/** The bounds a relay enforces. Every field has a default in `defaultLimits`. */
export interface RelayLimits {
  /** Largest accepted frame in bytes; larger frames close the socket with 1009. */
  maxMessageBytes: number
  /** Sustained messages per second per connection. */
  messagesPerSecond: number
  /** Messages a connection may send in a burst above the sustained rate. */
  messageBurst: number
  /** Open connections per user (token `sub`). */
  maxConnectionsPerUser: number
  /** Open connections on the whole relay. */
  maxConnections: number
  /** Connection attempts per second per remote address (sustained). */
  upgradesPerSecond: number
  /** Connection attempts per remote address in a burst. */
  upgradeBurst: number
  /** Largest stored size of one document in bytes. */
  maxDocumentBytes: number
  /** Bytes queued to one slow client before it is disconnected. */
  maxBufferedBytes: number
  /** Milliseconds a document with no connections stays loaded before it is flushed and unloaded. */
  unloadAfterMs: number
  /** Stored updates of one document before they are merged into one snapshot. */
  compactAfterUpdates: number
  /** Milliseconds between keep-alive pings; a socket that has not answered the previous one is dropped. */
  pingIntervalMs: number
  /** Awareness state bytes one connection may hold in its room. */
  maxAwarenessBytesPerConnection: number
  /** Awareness state bytes one room may hold, all connections together. */
  maxAwarenessBytesPerRoom: number
  /** Awareness bytes one connection may send per second (sustained; bursts of four times this). */
  awarenessBytesPerSecond: number
  /**
   * Documents one user may have open at once, over all their connections (a document
   * counts while at least one of the user's connections has it open; closing it frees it).
   * A document past it is refused with 4405 (`roomQuotaExceeded`).
   */
  maxDocumentsPerUser: number
  /**
   * @deprecated Use `maxDocumentsPerUser`: given alone, it sets that limit. It once
   * counted every room a user ever stored, which never went down.
   */
  maxRoomsPerUser?: number
  /** Bytes one user may store, all rooms together (purging a document frees its bytes). */
  maxBytesPerUser: number
  /** Sustained frames per second on one multiplexed (`/mux`) socket, all its documents together. */
  muxMessagesPerSecond: number
  /** Frames one multiplexed socket may send in a burst above the sustained rate. */
  muxMessageBurst: number
}

/** Default limits: generous for real clients, small enough to protect one machine. */
export const defaultLimits: RelayLimits = {
  maxMessageBytes: 1024 * 1024,
  messagesPerSecond: 100,
  messageBurst: 500,
  maxConnectionsPerUser: 100,
  maxConnections: 20_000,
  upgradesPerSecond: 200,
  upgradeBurst: 2000,
  maxDocumentBytes: 32 * 1024 * 1024,
  maxBufferedBytes: 8 * 1024 * 1024,
  unloadAfterMs: 1000,
  compactAfterUpdates: 500,
  pingIntervalMs: 30_000,
  maxAwarenessBytesPerConnection: 64 * 1024,
  maxAwarenessBytesPerRoom: 1024 * 1024,
  awarenessBytesPerSecond: 64 * 1024,
  maxDocumentsPerUser: 1000,
  maxBytesPerUser: 256 * 1024 * 1024,
  muxMessagesPerSecond: 2000,
  muxMessageBurst: 10_000,
}

/**
 * The limits a relay runs with: the defaults, then `given`; the deprecated
 * `maxRoomsPerUser`, given without `maxDocumentsPerUser`, sets it.
 *
 * @example
 * resolveLimits({ maxRoomsPerUser: 50 }).maxDocumentsPerUser // 50
 */
export function resolveLimits(given: Partial<RelayLimits> = {}): RelayLimits {
  const limits: RelayLimits = { ...defaultLimits, ...given }
  if (given.maxDocumentsPerUser === undefined && given.maxRoomsPerUser !== undefined) limits.maxDocumentsPerUser = given.maxRoomsPerUser
  delete limits.maxRoomsPerUser
  return limits
}

/** A token bucket: `take()` is false once the burst is spent faster than the rate refills it. */
export interface RateLimiter {
  /** Spend `amount` tokens (default 1); false, spending nothing, when fewer are left. */
  take(amount?: number): boolean
}

/**
 * Create a token bucket holding `burst` tokens, refilled at `perSecond`.
 *
 * @example
 * const limiter = createRateLimiter(100, 500)
 * if (!limiter.take()) socket.close(CloseCode.rateLimited)
 */
export function createRateLimiter(perSecond: number, burst: number, now: () => number = Date.now): RateLimiter {
  let tokens = burst
  let last = now()
  return {
    take(amount = 1) {
      const t = now()
      if (t > last) {
        tokens = Math.min(burst, tokens + ((t - last) * perSecond) / 1000)
        last = t
      }
      if (tokens < amount) return false
      tokens -= amount
      return true
    },
  }
}

/**
 * Rate limiters keyed by a string (remote address), forgotten once full again
 * so the map does not grow with every address ever seen.
 */
export function createKeyedRateLimiter(perSecond: number, burst: number, now: () => number = Date.now): { take(key: string): boolean; size(): number } {
  const buckets = new Map<string, { tokens: number; last: number }>()
  return {
    take(key) {
      const t = now()
      let b = buckets.get(key)
      if (b === undefined) {
        b = { tokens: burst, last: t }
        buckets.set(key, b)
      } else if (t > b.last) {
        b.tokens = Math.min(burst, b.tokens + ((t - b.last) * perSecond) / 1000)
        b.last = t
      }
      if (buckets.size > 10_000) {
        for (const [k, v] of buckets) if (v.tokens >= burst) buckets.delete(k)
      }
      if (b.tokens < 1) return false
      b.tokens -= 1
      return true
    },
    size: () => buckets.size,
  }
}
