import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { hostname } from 'node:os'
import { mintToken } from './auth.js'
import { parseCli, usage } from './cli-options.js'
import { createRelay } from './create-relay.js'
import { createLogger, errorMessage, silentLogger } from './log.js'
import { openBackend } from './open-backend.js'
import { createFanoutStats } from './redis-fanout.js'
import { revokeUser } from './revoke-command.js'

async function main(): Promise<void> {
  const cmd = parseCli(process.argv.slice(2), process.env)
  if (cmd.kind === 'help') {
    process.stdout.write(usage + '\n')
    return
  }
  if (cmd.kind === 'token') {
    if (cmd.devSecret) process.stderr.write('warning: signed with the development secret; set ENGRAM_RELAY_SECRET or --secret\n')
    const { scope, audience, issuer } = cmd
    process.stdout.write((await mintToken(cmd.secret, cmd.user, cmd.ttlSeconds, { scope, audience, issuer })) + '\n')
    return
  }
  if (cmd.kind === 'revoke') {
    const backend = await openBackend(cmd, `revoke-${process.pid}`, silentLogger)
    try {
      const result = await revokeUser(cmd.user, backend.store, backend.fanout)
      process.stdout.write(`revoked tokens of ${cmd.user} issued until ${new Date(result.at).toISOString()}\n`)
      if (result.error !== undefined)
        process.stderr.write(`warning: stored, but not announced on Redis (${result.error}); instances apply it within a second\n`)
    } finally {
      await backend.fanout?.close()
      await backend.store.close()
    }
    return
  }
  const log = createLogger({ level: cmd.logLevel })
  if (cmd.devSecret) {
    if (process.env.NODE_ENV === 'production') throw new Error('no signing secret: set ENGRAM_RELAY_SECRET (refusing the development secret in production)')
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

main().catch((err: unknown) => {
  process.stderr.write(`engram-relay: ${errorMessage(err)}\n`)
  process.exit(1)
})
