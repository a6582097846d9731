import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { WebSocket } from 'ws'
import { authenticate, authenticateToken, authorizeRoom } from './auth/authenticate.js'
import { defaultAuthorize } from './auth/authorize.js'
import type { Authorize } from './auth/authorize.js'
import { importVerifyKey } from './auth/tokens.js'
import type { TokenChecks, TokenGrant } from './auth/tokens.js'
import { CloseCode } from '@engram/sync/close-codes'
import type { CloseReason } from '@engram/sync/close-codes'
import { MUX_PATH } from '@engram/sync/mux-frames'
import { encodeRoomSegment, roomPath } from '@engram/sync/room-name'
import { openConnection } from './rooms/connection.js'
import type { Connection } from './rooms/connection.js'
import type { Link } from './rooms/socket-link.js'
import { openMuxConnection } from './rooms/mux-connection.js'
import type { DocumentAdmission, MuxConnection } from './rooms/mux-connection.js'
import { localFanout } from './cluster/fanout.js'
import type { Fanout } from './cluster/fanout.js'
import { handleHttp } from './http/http-routes.js'
import { createKeyedRateLimiter, resolveLimits } from './limits/limits.js'
import type { RelayLimits } from './limits/limits.js'
import { errorMessage, silentLogger } from './log.js'
import type { Logger } from './log.js'
import { createMetrics, increment, watchEventLoop } from './http/metrics.js'
import type { RelayGauges, RelayMetrics } from './http/metrics.js'
import { roomOwner } from './storage/persistence.js'
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
  /** Authenticate an HTTP upgrade and join the socket to its room (or, at `/mux`, serve it as a multiplexed socket), or close it with a documented code. */
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
  const limits: RelayLimits = resolveLimits(options.limits)
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
  const connections = new Set<Link>()
  const muxConnections = new Set<MuxConnection>()
  /** Rooms being dropped (their owner purged them): opening one waits until it is gone. */
  const dropping = new Map<string, Promise<void>>()
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
      userDocumentsPeak: peak.rooms,
      maxDocumentsPerUser: limits.maxDocumentsPerUser,
      userRoomsPeak: peak.rooms,
      maxRoomsPerUser: limits.maxDocumentsPerUser,
      muxConnections: muxConnections.size,
      muxDocuments: Array.from(muxConnections).reduce((n, c) => n + c.documents, 0),
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
      for (const peer of Array.from(room.peers.keys())) peer.close?.('storeUnavailable')
      unload(room, false)
    }
  }
  /** The room was dropped (here or on another instance): its peers are told, the loaded copy goes without a flush. */
  const closeDropped = (name: string): void => {
    const room = rooms.get(name)
    if (room === undefined) return
    for (const peer of Array.from(room.peers.keys())) peer.close?.('documentDropped')
    unload(room, false)
  }
  const batch = createWriteBatch(store, metrics, onCommitFailure)
  const roomContext = { store, batch, fanout, quotas, metrics, log, limits, dropped: closeDropped }

  const getRoom = async (name: string): Promise<Room> => {
    await dropping.get(name)
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
    quotas.release(encodeRoomSegment(user))
  }

  const onLeft = (conn: Connection): void => {
    connections.delete(conn)
    quotas.closeDocument(conn.user, conn.room.name)
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
      quotas.closeDocument(grant.user, room.name)
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
      await quotas.acquire(encodeRoomSegment(grant.user))
    } catch (err) {
      perUser.set(grant.user, (perUser.get(grant.user) ?? 1) - 1)
      if ((perUser.get(grant.user) ?? 0) <= 0) perUser.delete(grant.user)
      log.error('store unavailable', { error: errorMessage(err) })
      return refuseWith('storeUnavailable')
    }
    if (!quotas.openDocument(grant.user, roomName)) {
      release(grant.user)
      return refuseWith('roomQuotaExceeded')
    }
    try {
      room = await getRoom(roomName)
    } catch (err) {
      quotas.closeDocument(grant.user, roomName)
      release(grant.user)
      if (err instanceof RoomDamagedError) {
        markDamaged(err)
        return refuseWith('roomDamaged')
      }
      log.error('document load failed', { room: roomName, error: errorMessage(err) })
      return refuseWith('storeUnavailable')
    }
    if (socket.destroyed || closing) {
      quotas.closeDocument(grant.user, roomName)
      release(grant.user)
      scheduleUnload(room)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      accept(ws, grant, room)
    })
  }

  /** One document on a multiplexed socket: the admission of a room's own socket, answered per document. */
  const admitDocument = async (grant: TokenGrant, name: string): Promise<DocumentAdmission> => {
    const authorized = await authorizeRoom(grant, name, authorize)
    if (!authorized.ok) {
      if (authorized.error !== undefined) log.error('authorize failed', { reason: authorized.reason, error: authorized.error })
      return authorized
    }
    const roomName = authorized.room
    if (metrics.damagedRooms.has(roomName)) return { ok: false, reason: 'roomDamaged' }
    if (closing) return { ok: false, reason: 'unavailable' }
    if (!quotas.openDocument(grant.user, roomName)) return { ok: false, reason: 'roomQuotaExceeded' }
    try {
      const room = await getRoom(roomName)
      if (room.unloaded || closing) {
        quotas.closeDocument(grant.user, roomName)
        if (!closing) scheduleUnload(room)
        return { ok: false, reason: closing ? 'unavailable' : 'storeUnavailable' }
      }
      return { ok: true, room }
    } catch (err) {
      quotas.closeDocument(grant.user, roomName)
      if (err instanceof RoomDamagedError) {
        markDamaged(err)
        return { ok: false, reason: 'roomDamaged' }
      }
      log.error('document load failed', { room: roomName, error: errorMessage(err) })
      return { ok: false, reason: 'storeUnavailable' }
    }
  }

  /** The owner purged a document: its room, storage and quota go, on every instance. */
  const dropDocument = async (grant: TokenGrant, name: string): Promise<CloseReason | null> => {
    const authorized = await authorizeRoom(grant, name, authorize)
    if (!authorized.ok) return authorized.reason
    const roomName = authorized.room
    // Only the owner deletes, never a user `authorize` lets in, nor a read-only token.
    if (roomPath(roomName)?.[0] !== grant.user) return 'roomForbidden'
    if (grant.readOnly) return 'roomForbidden'
    const previous = dropping.get(roomName)
    const done = (async () => {
      await previous
      await batch.flush() // nothing queued for the room is committed after its rows are deleted
      closeDropped(roomName)
      await unloading.get(roomName)
      await store.drop(roomName)
      quotas.set(roomOwner(roomName), roomName, 0)
      fanout.publish(roomName, 'drop', new Uint8Array(0))
      metrics.documentsDropped++
      log.info('document dropped by its owner', { room: roomName })
    })()
    const tracked = done.finally(() => {
      if (dropping.get(roomName) === tracked) dropping.delete(roomName)
    })
    dropping.set(
      roomName,
      tracked.catch(() => undefined),
    )
    try {
      await tracked
      return null
    } catch (err) {
      log.error('drop failed', { room: roomName, error: errorMessage(err) })
      return 'storeUnavailable'
    }
  }

  const acceptMux = (ws: WebSocket, grant: TokenGrant): void => {
    ws.on('error', ignoreError)
    metrics.connectionsOpened++
    const conn = openMuxConnection(ws, grant, {
      limits,
      metrics,
      admit: admitDocument,
      release: (g, room) => {
        quotas.closeDocument(g.user, room.name)
        if (!closing) scheduleUnload(room)
      },
      drop: dropDocument,
      onLeft: (c) => {
        connections.delete(c)
        muxConnections.delete(c)
        release(c.user)
      },
    })
    connections.add(conn)
    muxConnections.add(conn)
    log.debug('multiplexed socket connected', { user: grant.user, connections: connections.size })
  }

  /** A multiplexed socket: the token and the connection caps now, each document when it is opened. */
  const admitMux = async (req: IncomingMessage, socket: Duplex, head: Buffer, grant: TokenGrant): Promise<void> => {
    const refuseWith = (reason: CloseReason): void => {
      upgradeAndRefuse(req, socket, head, reason)
    }
    await revocations.ready
    if (revocations.isRevoked(grant.user, grant.issuedAt)) return refuseWith('tokenRevoked')
    if (closing || connections.size >= limits.maxConnections) return refuseWith('unavailable')
    if ((perUser.get(grant.user) ?? 0) >= limits.maxConnectionsPerUser) return refuseWith('tooManyConnections')
    perUser.set(grant.user, (perUser.get(grant.user) ?? 0) + 1)
    try {
      await quotas.acquire(encodeRoomSegment(grant.user))
    } catch (err) {
      perUser.set(grant.user, (perUser.get(grant.user) ?? 1) - 1)
      if ((perUser.get(grant.user) ?? 0) <= 0) perUser.delete(grant.user)
      log.error('store unavailable', { error: errorMessage(err) })
      return refuseWith('storeUnavailable')
    }
    if (socket.destroyed || closing) return release(grant.user)
    wss.handleUpgrade(req, socket, head, (ws) => {
      acceptMux(ws, grant)
    })
  }

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', ignoreError)
    if (closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    if (!upgradeLimiter.take(req.socket.remoteAddress ?? '')) return upgradeAndRefuse(req, socket, head, 'rateLimited')
    if (new URL(req.url ?? '/', 'http://relay.invalid').pathname === MUX_PATH) {
      authenticateToken(req.url ?? '/', key, options.tokens)
        .then(async (result) => {
          if (socket.destroyed) return
          if (!result.ok) {
            log.info('connection refused', { reason: result.reason, code: result.code })
            return upgradeAndRefuse(req, socket, head, result.reason)
          }
          const { ok: _ok, ...grant } = result
          await admitMux(req, socket, head, grant)
        })
        .catch((err: unknown) => {
          log.error('upgrade failed', { error: errorMessage(err) })
          socket.destroy()
        })
      return
    }
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
