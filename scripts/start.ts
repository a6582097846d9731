/**
 * `npm start`: builds the demo, starts the relay and serves the demo, all on
 * 127.0.0.1, prints both URLs, and stops both on Ctrl-C / SIGTERM.
 *
 * Flags (or env): --port (DEMO_PORT, 5173), --relay-port (RELAY_PORT, 1234),
 * --data (ENGRAM_DATA, ./.data), --no-build (serve the last build).
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { buildDemo } from './build-demo.js'
import { serveDemo, type DemoServer } from './demo-server.js'
import { startRelayProcess, type RelayProcess } from './relay-process.js'

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'relay-port': { type: 'string' },
    data: { type: 'string' },
    'no-build': { type: 'boolean' },
    verbose: { type: 'boolean' },
  },
})

const host = '127.0.0.1'
const demoPort = Number(values.port ?? process.env.DEMO_PORT ?? 5173)
const relayPort = Number(values['relay-port'] ?? process.env.RELAY_PORT ?? 1234)
const data = resolve(values.data ?? process.env.ENGRAM_DATA ?? './.data')

/** A per-checkout development secret, kept in the data folder so tokens survive restarts. */
async function devSecret(): Promise<string> {
  if (process.env.ENGRAM_RELAY_SECRET) return process.env.ENGRAM_RELAY_SECRET
  const file = join(data, 'dev-secret')
  const existing = await readFile(file, 'utf8').catch(() => '')
  if (existing.trim() !== '') return existing.trim()
  const secret = randomBytes(32).toString('base64url')
  await writeFile(file, secret + '\n', { mode: 0o600 })
  return secret
}

let relay: RelayProcess | undefined
let demo: DemoServer | undefined
let stopping = false

async function main(): Promise<void> {
  await mkdir(join(data, 'relay'), { recursive: true })
  const secret = await devSecret()
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return
    stopping = true
    process.stdout.write(`\n${signal}: stopping…\n`)
    await Promise.allSettled([demo?.close(), relay?.stop()])
    process.stdout.write('stopped.\n')
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))

  if (values['no-build'] !== true) {
    process.stdout.write('building the demo…\n')
    await buildDemo()
  }
  relay = await startRelayProcess({
    host,
    port: relayPort,
    data: join(data, 'relay'),
    secret,
    log: values.verbose === true ? (line) => process.stdout.write(`[relay] ${line}\n`) : undefined,
  })
  const relayUrl = relay.url
  void relay.exited.then((code) => {
    if (!stopping)
      process.stderr.write(`\nthe relay stopped unexpectedly (${String(code)}); the demo keeps working offline. Run with --verbose to see its log.\n`)
  })
  demo = await serveDemo({ root: resolve('apps/demo/dist'), host, port: demoPort, relayUrl: () => relayUrl, secret })
  if (stopping) return
  process.stdout.write(
    [
      '',
      `  Engram demo   ${demo.url}/?device=A   (open ${demo.url}/?device=B in another browser profile)`,
      `  Engram relay  ${relay.url}            (health: http://${host}:${relay.port}/healthz, data: ${join(data, 'relay')})`,
      '',
      '  Development only: the demo server signs relay tokens for any user at /dev-token.',
      '  Press Ctrl-C to stop both.',
      '',
    ].join('\n') + '\n',
  )
}

main().catch(async (err: unknown) => {
  stopping = true
  const taken = (err as { code?: unknown }).code === 'EADDRINUSE' ? ' (pick other ports with --port and --relay-port)' : ''
  process.stderr.write(`npm start: ${err instanceof Error ? err.message : String(err)}${taken}\n`)
  await Promise.allSettled([demo?.close(), relay?.stop()])
  process.exit(1)
})
