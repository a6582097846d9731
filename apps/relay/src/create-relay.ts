import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { WebSocket } from 'ws'
import { authenticate } from './auth/authenticate.js'
import { defaultAuthorize } from './auth/authorize.js'
import type { Authorize } from './auth/authorize.js'
import { importVerifyKey } from './auth/tokens.js'
import type { TokenChecks, TokenGrant } from './auth/tokens.js'
import { CloseCode } from '@engram/sync/close-codes'
import type { CloseReason } from '@engram/sync/close-codes'
import { openConnection } from './rooms/connection.js'
import type { Connection } from './rooms/connection.js'
import { localFanout } from './cluster/fanout.js'
import type { Fanout } from './cluster/fanout.js'
import { handleHttp } from './http/http-routes.js'
import { createKeyedRateLimiter, defaultLimits } from './limits/limits.js'
import type { RelayLimits } from './limits/limits.js'
import { errorMessage, silentLogger } from './log.js'
import type { Logger } from './log.js'
import { createMetrics, increment, watchEventLoop } from './http/metrics.js'
import type { RelayGauges, RelayMetrics } from './http/metrics.js'
import type { RelayStore } from './storage/persistence.js'
import { createRevocationList } from './auth/revocation-list.js'
import { openRoom } from './rooms/room.js'
import type { Room } from './rooms/room.js'
import { RoomDamagedError } from './storage/store-errors.js'
import { createUserQuotas } from './limits/user-quotas.js'
import { createWriteBatch } from './rooms/write-batch.js'

/**
 * Shared no-op error listener. A closure created inside `handleUpgrade` would
 * keep that call's whole context (request, headers, URL) alive as long as the
 * socket lives: about 3 KiB per connection.
 */
const ignoreError = (): void => {}

/** How often connections are checked for an expired token. */
const expirySweepMs = 250

/** What a relay needs: the token secret, a durable store, and optional limits and logger. */
export interface RelayOptions {
  /** HS256 signing secret shared with the backend that mints tokens. */
  secret: string | Uint8Array
  store: RelayStore
  limits?: Partial<RelayLimits>
  log?: Logger
  /** How instances hear each other (`openRedisFanout`); default: alone. */
  fanout?: Fanout
  /** This instance's name in logs and between instances; default `<hostname>-<pid>-<random>`. */
  instanceId?: string
  /** Required `aud` / `iss` claims. */
  tokens?: TokenChecks
  /**
   * Whether a token's user may join a room (checked before anything is
   * loaded); default {@link defaultAuthorize}: only their own rooms `<user>/…`.
   */
  authorize?: Authorize
  /** When set, `/metrics` requires `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string
  /** Milliseconds between rereads of the store's revocations (the fanout delivers them at once). Default 1000. */
  revocationPollMs?: number
}

/** A running relay, independent of how its HTTP server was created. */
export interface Relay {
  readonly instanceId: string
  /** Authenticate an HTTP upgrade and join the socket to its room, or close it with a documented code. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
  /** Answer `/healthz` and `/metrics`; false for other requests. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean
  /** Route a server's upgrades and health/metrics requests to this relay; returns the detach function. */
  attach(server: Server): () => void
  /** Check every stored room (slow: at startup) and refuse the damaged ones; returns their names. */
  checkIntegrity(): Promise<string[]>
  /** Stop accepting, close sockets as "going away", flush every document and close the store. */
  close(): Promise<void>
  readonly metrics: RelayMetrics
  /** Current connection, user and document counts. */
  gauges(): RelayGauges
}

/**
 * Create a relay speaking the y-websocket protocol with token auth, durable
 * storage and limits. It opens no port: attach it to an HTTP server.
 *
 * @throws TypeError when `authorize` is given and is not a function.
 * @example
 * const relay = createRelay({ secret, store: openSqliteStore('./.data/relay') })
 * const server = http.createServer((req, res) => { if (!relay.handleRequest(req, res)) res.writeHead(404).end() })
 * relay.attach(server)
 * server.listen(1234, '127.0.0.1')
 */
export function createRelay(options: RelayOptions): Relay {
  const authorize = options.authorize ?? defaultAuthorize
  // Checked here, not at the first connection: JavaScript callers get no type error.
  if (typeof authorize !== 'function')
    throw new TypeError(`createRelay: authorize must be a function (grant, room) => boolean | Promise<boolean>, got ${typeof authorize}`)
  const limits: RelayLimits = { ...defaultLimits, ...options.limits }
  const log = options.log ?? silentLogger
  const { store } = options
  const instanceId = options.instanceId ?? options.fanout?.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`
  const fanout = options.fanout ?? localFanout(instanceId)
  const key = importVerifyKey(options.secret)
  key.catch(() => {}) // surfaces per connection, as an upgrade failure
  const metrics = createMetrics()
  watchEventLoop()
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false, clientTracking: false })
  const rooms = new Map<string, Room>()
  const loading = new Map<string, Promise<Room>>()
  const unloading = new Map<string, Promise<void>>()
  const unloadTimers = new Map<string, NodeJS.Timeout>()
  const connections = new Set<Connection>()
  /** Open and reserved connections per user. */
  const perUser = new Map<string, number>()
  const quotas = createUserQuotas(store, limits)
  const upgradeLimiter = createKeyedRateLimiter(limits.upgradesPerSecond, limits.upgradeBurst)
  let closing = false

  const gauges = (): RelayGauges => {
    const peak = quotas.peak()
    return {
      connections: connections.size,
      documentsLoaded: rooms.size,
      users: perUser.size,
      userRoomsPeak: peak.rooms,
      maxRoomsPerUser: limits.maxRoomsPerUser,
      userBytesPeak: peak.bytes,
      maxBytesPerUser: limits.maxBytesPerUser,
    }
  }

  const unload = (room: Room, flush: boolean): void => {
    clearTimeout(unloadTimers.get(room.name))
    unloadTimers.delete(room.name)
    if (rooms.get(room.name) !== room) return
    rooms.delete(room.name)
    const done: Promise<void> = room
      .unload({ flush })
      .catch((err: unknown) => {
        log.error('unload failed', { room: room.name, error: errorMessage(err) })
      })
      .finally(() => {
        if (unloading.get(room.name) === done) unloading.delete(room.name)
      })
    unloading.set(room.name, done)
    metrics.documentsUnloadedTotal++
    log.debug('document unloaded', { room: room.name })
  }

  const scheduleUnload = (room: Room): void => {
    if (room.peers.size > 0 || unloadTimers.has(room.name) || rooms.get(room.name) !== room) return
    if (limits.unloadAfterMs <= 0) return unload(room, true)
    const timer = setTimeout(() => {
      unloadTimers.delete(room.name)
      if (room.peers.size === 0) unload(room, true)
    }, limits.unloadAfterMs)
    timer.unref()
    unloadTimers.set(room.name, timer)
  }

  /** A commit failed: these rooms hold updates that are not in the store, so drop them; clients resync on reconnect. */
  const onCommitFailure = (names: Set<string>, err: unknown): void => {
    for (const name of names) {
      const room = rooms.get(name)
      if (room === undefined) continue
      log.error('persistence failed, room unloaded', { room: name, error: errorMessage(err) })
      for (const peer of Array.from(room.peers.keys())) (peer as Connection).close('storeUnavailable')
      unload(room, false)
    }
  }
  const batch = createWriteBatch(store, metrics, onCommitFailure)
  const roomContext = { store, batch, fanout, quotas, metrics, log, limits }

  const getRoom = async (name: string): Promise<Room> => {
    const timer = unloadTimers.get(name)
    if (timer !== undefined) {
      clearTimeout(timer)
      unloadTimers.delete(name)
    }
    const loaded = rooms.get(name)
    if (loaded !== undefined) return loaded
    await unloading.get(name)
    let pending = loading.get(name)
    if (pending === undefined) {
      pending = openRoom(name, roomContext)
        .then((room) => {
          rooms.set(name, room)
          metrics.documentsLoadedTotal++
          return room
        })
        .finally(() => {
          loading.delete(name)
        })
      loading.set(name, pending)
    }
    return await pending
  }

  const release = (user: string): void => {
    const n = (perUser.get(user) ?? 1) - 1
    if (n <= 0) perUser.delete(user)
    else perUser.set(user, n)
    quotas.release(user)
  }

  const onLeft = (conn: Connection): void => {
    connections.delete(conn)
    release(conn.user)
    if (!closing) scheduleUnload(conn.room)
  }

  const revocations = createRevocationList({
    store,
    fanout,
    log,
    pollMs: options.revocationPollMs ?? 1000,
    onRevoked(user, atMs) {
      for (const conn of connections) if (conn.user === user && conn.issuedAt <= atMs) conn.close('tokenRevoked')
    },
  })

  const refuse = (ws: WebSocket, reason: CloseReason): void => {
    increment(metrics.refused, reason)
    ws.close(CloseCode[reason], reason)
  }

  /** Accept the socket only to close it with a code the stock client reports. */
  const upgradeAndRefuse = (req: IncomingMessage, socket: Duplex, head: Buffer, reason: CloseReason): void => {
    if (socket.destroyed) return
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', ignoreError)
      refuse(ws, reason)
    })
  }

  const markDamaged = (err: RoomDamagedError): void => {
    if (!metrics.damagedRooms.has(err.room)) log.error('room damaged: refusing it until restored from a backup', { room: err.room, error: err.message })
    metrics.damagedRooms.set(err.room, err.message)
  }

  const accept = (ws: WebSocket, grant: TokenGrant, room: Room): void => {
    ws.on('error', ignoreError)
    if (room.unloaded) {
      release(grant.user)
      return refuse(ws, 'storeUnavailable')
    }
    metrics.connectionsOpened++
    const conn = openConnection(ws, grant, room, { limits, metrics, onLeft })
    connections.add(conn)
    log.debug('connected', { user: grant.user, room: room.name, connections: connections.size })
  }

  /** After the token is valid: admission (caps, quotas, damage), then the room, then the socket. */
  const admit = async (req: IncomingMessage, socket: Duplex, head: Buffer, grant: TokenGrant, roomName: string): Promise<void> => {
    const refuseWith = (reason: CloseReason): void => {
      upgradeAndRefuse(req, socket, head, reason)
    }
    await revocations.ready
    if (revocations.isRevoked(grant.user, grant.issuedAt)) return refuseWith('tokenRevoked')
    if (metrics.damagedRooms.has(roomName)) return refuseWith('roomDamaged')
    if (closing || connections.size >= limits.maxConnections) return refuseWith('unavailable')
    if ((perUser.get(grant.user) ?? 0) >= limits.maxConnectionsPerUser) return refuseWith('tooManyConnections')
    // Reserve the user's slot now: concurrent attempts must not all pass the cap.
    perUser.set(grant.user, (perUser.get(grant.user) ?? 0) + 1)
    let room: Room
    try {
      await quotas.acquire(grant.user)
    } catch (err) {
      perUser.set(grant.user, (perUser.get(grant.user) ?? 1) - 1)
      if ((perUser.get(grant.user) ?? 0) <= 0) perUser.delete(grant.user)
      log.error('store unavailable', { error: errorMessage(err) })
      return refuseWith('storeUnavailable')
    }
    if (!quotas.mayOpen(grant.user, roomName)) {
      release(grant.user)
      return refuseWith('roomQuotaExceeded')
    }
    try {
      room = await getRoom(roomName)
    } catch (err) {
      release(grant.user)
      if (err instanceof RoomDamagedError) {
        markDamaged(err)
        return refuseWith('roomDamaged')
      }
      log.error('document load failed', { room: roomName, error: errorMessage(err) })
      return refuseWith('storeUnavailable')
    }
    if (socket.destroyed || closing) {
      release(grant.user)
      scheduleUnload(room)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      accept(ws, grant, room)
    })
  }

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', ignoreError)
    if (closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    if (!upgradeLimiter.take(req.socket.remoteAddress ?? '')) return upgradeAndRefuse(req, socket, head, 'rateLimited')
    authenticate(req.url ?? '/', key, options.tokens, authorize)
      .then(async (result) => {
        if (socket.destroyed) return
        if (!result.ok) {
          if (result.error !== undefined) log.error('authorize failed', { reason: result.reason, code: result.code, error: result.error })
          else log.info('connection refused', { reason: result.reason, code: result.code })
          return upgradeAndRefuse(req, socket, head, result.reason)
        }
        await admit(req, socket, head, result, result.room)
      })
      .catch((err: unknown) => {
        log.error('upgrade failed', { error: errorMessage(err) })
        socket.destroy()
      })
  }

  const pingTimer = setInterval(
    () => {
      for (const conn of connections) {
        if (!conn.alive) conn.terminate('pingTimeout')
        else conn.ping()
      }
    },
    Math.max(50, limits.pingIntervalMs),
  )
  pingTimer.unref()

  // A live connection ends with its token: the client fetches a fresh one and reconnects.
  const expiryTimer = setInterval(() => {
    const now = Date.now()
    for (const conn of connections) if (conn.expiresAt <= now) conn.close('tokenExpired')
  }, expirySweepMs)
  expiryTimer.unref()

  const stopResync = fanout.onResync(() => {
    for (const room of rooms.values()) {
      room.resync().catch((err: unknown) => {
        log.warn('resync failed', { room: room.name, error: errorMessage(err) })
      })
    }
  })

  return {
    instanceId,
    handleUpgrade,
    handleRequest: (req, res) => handleHttp(req, res, { metrics, gauges, closing: () => closing, metricsToken: options.metricsToken }),
    attach(server) {
      const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
        handleUpgrade(req, socket, head)
      }
      server.on('upgrade', onUpgrade)
      return () => {
        server.off('upgrade', onUpgrade)
      }
    },
    async checkIntegrity() {
      const damaged = await store.damagedRooms()
      for (const room of damaged) markDamaged(new RoomDamagedError(room, new Error('integrity check failed')))
      return damaged
    },
    async close() {
      if (closing) return
      closing = true
      clearInterval(pingTimer)
      clearInterval(expiryTimer)
      stopResync()
      revocations.stop()
      const open = Array.from(connections)
      await batch.flush()
      for (const conn of open) conn.close('goingAway')
      // Give clients a moment to answer the close frame, then drop the rest.
      await new Promise((resolve) => setTimeout(resolve, open.length > 0 ? 200 : 0))
      for (const conn of open) conn.terminate('goingAway')
      await Promise.allSettled(Array.from(loading.values()))
      for (const room of Array.from(rooms.values())) unload(room, true)
      await Promise.allSettled(Array.from(unloading.values()))
      await fanout.close()
      await store.close()
      log.info('relay closed', { connections: open.length })
    },
    metrics,
    gauges,
  }
}
