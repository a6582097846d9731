import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { WebSocket } from 'ws'
import { authenticate, importVerifyKey } from './auth.js'
import { CloseCode } from './close-codes.js'
import type { CloseReason } from './close-codes.js'
import { openConnection } from './connection.js'
import type { Connection } from './connection.js'
import { handleHttp } from './http-routes.js'
import { createKeyedRateLimiter, defaultLimits } from './limits.js'
import type { RelayLimits } from './limits.js'
import { errorMessage, silentLogger } from './log.js'
import type { Logger } from './log.js'
import { createMetrics, increment, watchEventLoop } from './metrics.js'
import type { RelayGauges, RelayMetrics } from './metrics.js'
import type { RelayStore } from './persistence.js'
import { loadRoom } from './room.js'
import { createWriteBatch } from './write-batch.js'
import type { Room } from './room.js'

/**
 * Shared no-op error listener. A closure created inside `handleUpgrade` would
 * keep that call's whole context (request, headers, URL) alive as long as the
 * socket lives: about 3 KiB per connection.
 */
const ignoreError = (): void => {}

/** What a relay needs: the token secret, a durable store, and optional limits and logger. */
export interface RelayOptions {
  /** HS256 signing secret shared with the backend that mints tokens. */
  secret: string | Uint8Array
  store: RelayStore
  limits?: Partial<RelayLimits>
  log?: Logger
}

/** A running relay, independent of how its HTTP server was created. */
export interface Relay {
  /** Authenticate an HTTP upgrade and join the socket to its room, or close it with a documented code. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
  /** Answer `/healthz` and `/metrics`; false for other requests. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean
  /** Route a server's upgrades and health/metrics requests to this relay; returns the detach function. */
  attach(server: Server): () => void
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
 * @example
 * const relay = createRelay({ secret, store: openSqliteStore('./.data/relay') })
 * const server = http.createServer((req, res) => { if (!relay.handleRequest(req, res)) res.writeHead(404).end() })
 * relay.attach(server)
 * server.listen(1234, '127.0.0.1')
 */
export function createRelay(options: RelayOptions): Relay {
  const limits: RelayLimits = { ...defaultLimits, ...options.limits }
  const log = options.log ?? silentLogger
  const { store } = options
  const key = importVerifyKey(options.secret)
  key.catch(() => {}) // surfaces per connection, as an upgrade failure
  const metrics = createMetrics()
  watchEventLoop()
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false, clientTracking: false })
  const rooms = new Map<string, Room>()
  const unloadTimers = new Map<string, NodeJS.Timeout>()
  const connections = new Set<Connection>()
  const perUser = new Map<string, number>()
  const upgradeLimiter = createKeyedRateLimiter(limits.upgradesPerSecond, limits.upgradeBurst)
  let closing = false

  const gauges = (): RelayGauges => ({ connections: connections.size, documentsLoaded: rooms.size, users: perUser.size })

  const unload = (room: Room, flush: boolean): void => {
    clearTimeout(unloadTimers.get(room.name))
    unloadTimers.delete(room.name)
    if (rooms.get(room.name) !== room) return
    rooms.delete(room.name)
    room.unload({ flush })
    metrics.documentsUnloadedTotal++
    log.debug('document unloaded', { room: room.name })
  }

  const scheduleUnload = (room: Room): void => {
    if (room.peers.size > 0 || unloadTimers.has(room.name)) return
    if (limits.unloadAfterMs <= 0) return unload(room, true)
    const timer = setTimeout(() => {
      unloadTimers.delete(room.name)
      if (room.peers.size === 0) unload(room, true)
    }, limits.unloadAfterMs)
    timer.unref()
    unloadTimers.set(room.name, timer)
  }

  const openRoom = (name: string): Room => {
    const timer = unloadTimers.get(name)
    if (timer !== undefined) {
      clearTimeout(timer)
      unloadTimers.delete(name)
    }
    let room = rooms.get(name)
    if (room === undefined) {
      room = loadRoom(name, { store, batch, metrics, log, maxDocumentBytes: limits.maxDocumentBytes, compactAfterUpdates: limits.compactAfterUpdates })
      rooms.set(name, room)
      metrics.documentsLoadedTotal++
    }
    return room
  }

  /** A commit failed: these rooms hold updates that are not on disk, so drop them; clients resync on reconnect. */
  const onCommitFailure = (names: Set<string>, err: unknown): void => {
    for (const name of names) {
      const room = rooms.get(name)
      if (room === undefined) continue
      log.error('persistence failed, room unloaded', { room: name, error: errorMessage(err) })
      for (const peer of Array.from(room.peers.keys())) (peer as Connection).close('internalError')
      unload(room, false)
    }
  }
  const batch = createWriteBatch(store, metrics, onCommitFailure)

  const onLeft = (conn: Connection): void => {
    connections.delete(conn)
    const n = (perUser.get(conn.user) ?? 1) - 1
    if (n <= 0) perUser.delete(conn.user)
    else perUser.set(conn.user, n)
    if (!closing) scheduleUnload(conn.room)
  }

  const refuse = (ws: WebSocket, reason: CloseReason): void => {
    increment(metrics.refused, reason)
    ws.close(CloseCode[reason], reason)
  }

  /** Accept the socket only to close it with a code the stock client reports. */
  const upgradeAndRefuse = (req: IncomingMessage, socket: Duplex, head: Buffer, reason: CloseReason): void => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', ignoreError)
      refuse(ws, reason)
    })
  }

  const accept = (ws: WebSocket, user: string, roomName: string): void => {
    ws.on('error', ignoreError)
    if (closing || connections.size >= limits.maxConnections) return refuse(ws, 'unavailable')
    if ((perUser.get(user) ?? 0) >= limits.maxConnectionsPerUser) return refuse(ws, 'tooManyConnections')
    let room: Room
    try {
      room = openRoom(roomName)
    } catch (err) {
      log.error('document load failed', { room: roomName, error: errorMessage(err) })
      return refuse(ws, 'internalError')
    }
    perUser.set(user, (perUser.get(user) ?? 0) + 1)
    metrics.connectionsOpened++
    const conn = openConnection(ws, user, room, { limits, metrics, onLeft })
    connections.add(conn)
    log.debug('connected', { user, room: roomName, connections: connections.size })
  }

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', ignoreError)
    if (closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    if (!upgradeLimiter.take(req.socket.remoteAddress ?? '')) return upgradeAndRefuse(req, socket, head, 'rateLimited')
    authenticate(req.url ?? '/', key)
      .then((result) => {
        if (socket.destroyed) return
        if (!result.ok) {
          log.info('connection refused', { reason: result.reason, code: result.code })
          return upgradeAndRefuse(req, socket, head, result.reason)
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          accept(ws, result.user, result.room)
        })
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

  return {
    handleUpgrade,
    handleRequest: (req, res) => handleHttp(req, res, { metrics, gauges, closing: () => closing }),
    attach(server) {
      const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
        handleUpgrade(req, socket, head)
      }
      server.on('upgrade', onUpgrade)
      return () => {
        server.off('upgrade', onUpgrade)
      }
    },
    async close() {
      if (closing) return
      closing = true
      clearInterval(pingTimer)
      const open = Array.from(connections)
      batch.flush()
      for (const conn of open) conn.close('goingAway')
      // Give clients a moment to answer the close frame, then drop the rest.
      await new Promise((resolve) => setTimeout(resolve, open.length > 0 ? 200 : 0))
      for (const conn of open) conn.terminate('goingAway')
      for (const room of Array.from(rooms.values())) unload(room, true)
      await store.close()
      log.info('relay closed', { connections: open.length })
    },
    metrics,
    gauges,
  }
}
