import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDemo } from '../../../scripts/build-demo.js'
import { serveDemo, type DemoServer } from '../../../scripts/demo-server.js'
import { startRelayProcess, type RelayProcess } from '../../../scripts/relay-process.js'

/** What `npm start` runs, in a temporary folder on free ports, with a relay that can be stopped and restarted. */
export interface DemoStack {
  /** The demo's http URL. */
  readonly url: string
  /** The per-run folder (built demo, relay data); removed by close(). */
  readonly dir: string
  stopRelay(): Promise<void>
  /** Starts the relay again on the same port with the same data. */
  startRelay(): Promise<void>
  close(): Promise<void>
}

/** Builds the demo and starts relay + demo server on 127.0.0.1. */
export async function startDemoStack(): Promise<DemoStack> {
  const dir = await mkdtemp(join(tmpdir(), 'engram-demo-e2e-'))
  const secret = randomBytes(32).toString('base64url')
  const root = await buildDemo({ outDir: join(dir, 'dist'), quiet: true })
  let relay: RelayProcess | undefined = await startRelayProcess({ port: 0, data: join(dir, 'relay'), secret })
  const port = relay.port
  const relayUrl = relay.url
  let server: DemoServer | undefined
  try {
    server = await serveDemo({ root, port: 0, relayUrl: () => relayUrl, secret })
  } catch (error) {
    await relay.stop()
    throw error
  }
  const demo = server
  return {
    url: demo.url,
    dir,
    async stopRelay() {
      await relay?.stop()
      relay = undefined
    },
    async startRelay() {
      relay ??= await startRelayProcess({ port, data: join(dir, 'relay'), secret })
    },
    async close() {
      await Promise.allSettled([demo.close(), relay?.stop()])
      await rm(dir, { recursive: true, force: true })
    },
  }
}
