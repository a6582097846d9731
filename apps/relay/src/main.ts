import { createServer } from 'node:http'
import { resolve } from 'node:path'
import { mintToken } from './auth.js'
import { parseCli, usage } from './cli-options.js'
import { createRelay } from './create-relay.js'
import { createLogger, errorMessage } from './log.js'
import { openSqliteStore } from './persistence-sqlite.js'

async function main(): Promise<void> {
  const cmd = parseCli(process.argv.slice(2), process.env)
  if (cmd.kind === 'help') {
    process.stdout.write(usage + '\n')
    return
  }
  if (cmd.kind === 'token') {
    if (cmd.devSecret) process.stderr.write('warning: signed with the development secret; set ENGRAM_RELAY_SECRET or --secret\n')
    process.stdout.write((await mintToken(cmd.secret, cmd.user, cmd.ttlSeconds)) + '\n')
    return
  }
  const log = createLogger({ level: cmd.logLevel })
  if (cmd.devSecret) {
    if (process.env.NODE_ENV === 'production') throw new Error('no signing secret: set ENGRAM_RELAY_SECRET (refusing the development secret in production)')
    log.warn('using the development signing secret: anyone can mint tokens; set ENGRAM_RELAY_SECRET or --secret')
  }
  const data = resolve(cmd.data)
  const store = openSqliteStore(data, { sync: cmd.sync })
  const relay = createRelay({ secret: cmd.secret, store, limits: cmd.limits, log })
  const server = createServer((req, res) => {
    if (!relay.handleRequest(req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
  })
  relay.attach(server)
  server.listen(cmd.port, cmd.host, () => {
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? address.port : cmd.port
    log.info('listening', { host: cmd.host, port, data, sync: cmd.sync })
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
