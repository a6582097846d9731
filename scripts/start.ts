/**
 * `npm start`: builds the demo, starts the relay and serves the demo, all on
 * 127.0.0.1, prints both URLs, and stops both on Ctrl-C / SIGTERM.
 *
 * Stopping: SIGINT or SIGTERM to npm (which forwards it: the npm script
 * `exec`s node, so no shell sits in between), to this process or to the relay
 * stops all of them; so does npm ending by any other means (this process then
 * finds itself with another parent). A relay that crashes leaves the demo
 * running offline, and says so.
 *
 * Flags (or env): --port (DEMO_PORT, 5173), --relay-port (RELAY_PORT, 1234),
 * --data (ENGRAM_DATA, ./.data), --no-build (serve the last build; tests use it
 * to skip the Vite build), --verbose (the relay's log).
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

/** Stops the demo server and the relay, then exits with `code`. */
async function stop(why: string, code = 0): Promise<void> {
  if (stopping) return
  stopping = true
  process.stdout.write(`\n${why}: stopping…\n`)
  await Promise.allSettled([demo?.close(), relay?.stop()])
  process.stdout.write('stopped.\n')
  process.exit(code)
}

/** How often this process checks that npm (its parent) is still there. */
const PARENT_CHECK_MS = 250

async function main(): Promise<void> {
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // npm killed outright (or a shell in between that does not pass signals on): this process is reparented.
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) void stop('npm exited')
  }, PARENT_CHECK_MS).unref()
  await mkdir(join(data, 'relay'), { recursive: true })
  const secret = await devSecret()

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
    if (stopping) return
    // Exit code 0: the relay was asked to stop (SIGINT / SIGTERM) and shut down cleanly; so does everything else.
    if (code === 0) return void stop('the relay stopped', 0)
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
      '  Development only: the demo server signs relay tokens for any user at /dev-token (for 127.0.0.1/localhost and the demo page only).',
      '  Press Ctrl-C to stop both.',
      '',
    ].join('\n') + '\n',
  )
}

main().catch(async (err: unknown) => {
  stopping = true
  process.stderr.write(`npm start: ${startFailure(err)}\n`)
  await Promise.allSettled([demo?.close(), relay?.stop()])
  process.exit(1)
})

/** One line for a failed start; a taken port names the flag that picks another. */
function startFailure(err: unknown): string {
  if ((err as { code?: unknown }).code !== 'EADDRINUSE') return err instanceof Error ? err.message : String(err)
  // The relay starts first: before it listens, a taken port is its own.
  const [what, flag, taken] = relay === undefined ? ['relay', '--relay-port', relayPort] : ['demo', '--port', demoPort]
  return `${host}:${taken} is already in use; start the ${what} on another port with ${flag} <port> (0 picks a free one)`
}
