import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { hostname } from 'node:os'
import { createFanoutStats } from '../cluster/redis-fanout.js'
import { createRelay } from '../create-relay.js'
import { createLogger, errorMessage } from '../log.js'
import type { ServeCommand } from './cli-options.js'
import { openBackend } from './open-backend.js'

/**
 * `engram-relay serve`: open the configured store (and Redis), create the
 * relay, listen, and shut down gracefully on SIGTERM / SIGINT.
 *
 * @throws Error when the development secret is used under `NODE_ENV=production`, or the store cannot be opened.
 */
export async function serve(cmd: ServeCommand, env: NodeJS.ProcessEnv): Promise<void> {
  const log = createLogger({ level: cmd.logLevel })
  if (cmd.devSecret) {
    if (env.NODE_ENV === 'production') throw new Error('no signing secret: set ENGRAM_RELAY_SECRET (refusing the development secret in production)')
    log.warn('using the development signing secret: anyone can mint tokens; set ENGRAM_RELAY_SECRET or --secret')
  }
  const instanceId = cmd.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`
  const stats = createFanoutStats()
  const backend = await openBackend(cmd, instanceId, log, stats)
  const relay = createRelay({
    secret: cmd.secret,
    store: backend.store,
    limits: cmd.limits,
    log,
    instanceId,
    ...(backend.fanout === null ? {} : { fanout: backend.fanout }),
    tokens: {
      ...(cmd.tokenAudience === undefined ? {} : { audience: cmd.tokenAudience }),
      ...(cmd.tokenIssuer === undefined ? {} : { issuer: cmd.tokenIssuer }),
    },
    ...(cmd.metricsToken === undefined ? {} : { metricsToken: cmd.metricsToken }),
  })
  if (backend.fanout !== null) relay.metrics.fanout = stats
  if (cmd.integrityCheck) {
    const damaged = await relay.checkIntegrity()
    log.info('integrity check done', { damagedRooms: damaged.length })
  }
  const server = createServer((req, res) => {
    if (!relay.handleRequest(req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
  })
  relay.attach(server)
  server.listen(cmd.port, cmd.host, () => {
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? address.port : cmd.port
    log.info('listening', { host: cmd.host, port, instanceId, ...backend.describe })
  })

  let stopping = false
  const shutdown = (signal: string): void => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    server.close()
    relay.close().then(
      () => {
        server.closeAllConnections()
        // stdout is asynchronous on pipes: let the last log lines out before exiting.
        process.stdout.write('', () => process.exit(0))
      },
      (err: unknown) => {
        log.error('shutdown failed', { error: errorMessage(err) })
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => {
    shutdown('SIGTERM')
  })
  process.on('SIGINT', () => {
    shutdown('SIGINT')
  })
}
