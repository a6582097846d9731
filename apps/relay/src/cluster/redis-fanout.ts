import { Redis } from 'ioredis'
import type { Fanout, FanoutMessage } from './fanout.js'
import type { Logger } from '../log.js'
import { errorMessage } from '../log.js'

/** Options of {@link openRedisFanout}. */
export interface RedisFanoutOptions {
  /** `redis://host:port/db` */
  url: string
  instanceId: string
  log: Logger
  /** Channel prefix, so several relays can share one Redis. Default `engram-relay:`. */
  prefix?: string
  /** Counts messages and failures for `/metrics`. */
  stats?: FanoutStats
}

/** Fanout figures for `/metrics`. */
export interface FanoutStats {
  published: number
  received: number
  publishErrors: number
  resyncs: number
  connected: boolean
}

/** Fresh zeroed fanout figures. */
export function createFanoutStats(): FanoutStats {
  return { published: 0, received: 0, publishErrors: 0, resyncs: 0, connected: false }
}

const kinds: Array<FanoutMessage['kind']> = ['update', 'awareness', 'resync', 'drop']

/** `[kind][id length][instance id][payload]`: binary, so updates are not base64-inflated. */
function encodeMessage(kind: FanoutMessage['kind'], instanceId: Buffer, payload: Uint8Array): Buffer {
  const head = Buffer.from([kinds.indexOf(kind), instanceId.byteLength])
  return Buffer.concat([head, instanceId, payload])
}

function decodeMessage(message: Buffer): FanoutMessage | null {
  const kind = kinds[message[0] ?? 255]
  const idLength = message[1]
  if (kind === undefined || idLength === undefined || message.byteLength < 2 + idLength) return null
  const from = message.subarray(2, 2 + idLength).toString('utf8')
  const payload = message.subarray(2 + idLength)
  return { kind, from, payload: new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength) }
}

/**
 * Connect the relay instances through Redis **pub/sub**: one channel per
 * loaded room, carrying committed updates and awareness, and one channel for
 * revocations. Pub/sub is fire and forget, which is enough because every
 * update is in PostgreSQL before it is published: when the subscriber's
 * connection comes back, the instance rereads its loaded rooms from the store
 * (`onResync`), and when its publisher's comes back after failed publishes, it
 * tells the others to reread those rooms (a `resync` message), instead of
 * replaying a Redis log.
 *
 * @example
 * const fanout = openRedisFanout({ url: 'redis://127.0.0.1:6379', instanceId: 'relay-a', log })
 */
export function openRedisFanout(options: RedisFanoutOptions): Fanout {
  const prefix = options.prefix ?? 'engram-relay:'
  const { log } = options
  const stats = options.stats ?? createFanoutStats()
  const id = Buffer.from(options.instanceId, 'utf8')
  if (id.byteLength === 0 || id.byteLength > 255) throw new Error('--instance-id must be 1 to 255 bytes')
  const retryStrategy = (times: number): number => Math.min(50 * times, 1000)
  // The publisher fails fast while Redis is away: a queued publish would be
  // stale by the time it went out, and the resync after reconnecting covers it.
  const pub = new Redis(options.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy, lazyConnect: false })
  // The subscriber subscribes itself, on every 'ready': subscribing while a
  // connection is still in its handshake races with ioredis' own INFO/CLIENT
  // commands ("Connection in subscriber mode…", ioredis issue #2037).
  const sub = new Redis(options.url, { retryStrategy, maxRetriesPerRequest: null, autoResubscribe: false, enableReadyCheck: false, disableClientInfo: true })
  const rooms = new Map<string, (message: FanoutMessage) => void>()
  /** Every channel this instance listens to, subscribed again after each reconnect. */
  const wanted = new Set<string>()
  const resyncListeners = new Set<() => void>()
  const revocationListeners = new Set<(user: string, atMs: number) => void>()
  const revocationChannel = prefix + 'revocations'
  const roomChannel = (room: string): string => prefix + 'room:' + room
  let readyOnce = false
  let closed = false
  /** Rooms with an update this instance failed to publish: announced once the publisher is back. */
  const unpublished = new Set<string>()

  const announceUnpublished = (): void => {
    for (const room of unpublished) {
      pub.publish(roomChannel(room), encodeMessage('resync', id, new Uint8Array(0))).then(
        () => {
          unpublished.delete(room)
        },
        () => {},
      )
    }
  }
  pub.on('ready', announceUnpublished)

  pub.on('error', (err: Error) => {
    log.debug('redis publisher error', { error: errorMessage(err) })
  })
  sub.on('error', (err: Error) => {
    log.debug('redis subscriber error', { error: errorMessage(err) })
  })
  sub.on('close', () => {
    if (stats.connected && !closed) log.warn('redis connection lost; retrying', {})
    stats.connected = false
  })
  sub.on('ready', () => {
    stats.connected = true
    const first = !readyOnce
    readyOnce = true
    sub.subscribe(...wanted).then(
      () => {
        // After a reconnect, or when rooms were joined before the first
        // connection: messages may be missing, reread the rooms from the store.
        if (first && rooms.size === 0) return
        stats.resyncs++
        log.info('redis subscribed; rereading loaded rooms', { rooms: rooms.size })
        for (const listener of resyncListeners) listener()
      },
      (err: unknown) => {
        log.warn('redis subscribe failed', { error: errorMessage(err) })
      },
    )
  })
  sub.on('messageBuffer', (channel: Buffer, message: Buffer) => {
    const name = channel.toString('utf8')
    if (name === revocationChannel) {
      const [user, at] = message.toString('utf8').split('\n')
      if (user !== undefined && user !== '' && at !== undefined) for (const listener of revocationListeners) listener(user, Number(at))
      return
    }
    const decoded = decodeMessage(message)
    if (decoded === null || decoded.from === options.instanceId) return
    stats.received++
    rooms.get(name)?.(decoded)
  })
  wanted.add(revocationChannel)

  return {
    instanceId: options.instanceId,
    async join(room, onMessage) {
      const channel = roomChannel(room)
      rooms.set(channel, onMessage)
      wanted.add(channel)
      // With Redis away the room loads now; the subscription and a reread of
      // the room follow on the next 'ready'.
      if (sub.status === 'ready') await sub.subscribe(channel).catch(() => {})
    },
    leave(room) {
      const channel = roomChannel(room)
      if (!rooms.delete(channel)) return
      wanted.delete(channel)
      if (sub.status === 'ready') sub.unsubscribe(channel).catch(() => {})
    },
    publish(room, kind, payload) {
      pub.publish(roomChannel(room), encodeMessage(kind, id, payload)).then(
        () => {
          stats.published++
        },
        () => {
          stats.publishErrors++
          // The update is in the store: the other instances reread it when told.
          if (kind !== 'update') return
          unpublished.add(room)
          // The publisher may have come back before this failure was reported.
          if (pub.status === 'ready') announceUnpublished()
        },
      )
    },
    async publishRevocation(user, atMs) {
      if (pub.status !== 'ready') {
        // A one-shot command (engram-relay revoke) publishes right after connecting.
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => {
            reject(new Error('Redis not reachable within 5 s'))
          }, 5000)
          pub.once('ready', () => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      await pub.publish(revocationChannel, `${user}\n${atMs}`)
    },
    onResync(listener) {
      resyncListeners.add(listener)
      return () => {
        resyncListeners.delete(listener)
      }
    },
    onRevocation(listener) {
      revocationListeners.add(listener)
      return () => {
        revocationListeners.delete(listener)
      }
    },
    async close() {
      closed = true
      rooms.clear()
      // Nothing to flush on a bus, and QUIT would wait forever for a Redis that is away.
      pub.disconnect()
      sub.disconnect()
    },
  }
}
