/**
 * Load generator for `relay-load.ts`, run in its own process (forked with IPC)
 * so the relay under test does not share an event loop with its clients.
 * Minimal y-websocket protocol clients (sync step 1/2 + updates) over `ws`,
 * one `Y.Doc` each; each client writes its own key in a shared map with a
 * `performance.now()` stamp, receivers measure propagation latency.
 */
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import { mintToken } from '../../apps/relay/src/auth/tokens.js'

/** Settings sent by the parent as argv[2] (JSON). */
export interface LoadConfig {
  url: string
  /**
   * Several relay instances: the clients of each room are spread over them
   * (client j of a room on instance ⌊j / rooms⌋ mod n), and propagation
   * between instances is reported apart.
   */
  urls?: string[]
  secret: string
  rooms: number
  connections: number
  writeIntervalMs: number
  warmupMs: number
  measureMs: number
}

/** What the child reports at the end of the measured window. */
export interface LoadResult {
  latencies: number[]
  /** Latencies where writer and receiver are on different instances (empty with one). */
  crossLatencies: number[]
  writes: number
  received: number
  measuredMs: number
  clientCpuMs: number
  maxLoopLagMs: number
}

type ToParent = { type: 'opened'; connections: number } | { type: 'measure-start' } | ({ type: 'measure-end' } & LoadResult)

const config = JSON.parse(process.argv[2] ?? '{}') as LoadConfig
const send = (m: ToParent): void => {
  process.send?.(m)
}
const waitParent = async (type: string): Promise<void> =>
  await new Promise((resolve) => {
    const on = (m: { type: string }): void => {
      if (m.type === type) {
        process.off('message', on)
        resolve()
      }
    }
    process.on('message', on)
  })

let measuring = false
let measureFrom = 0
const latencies: number[] = []
const crossLatencies: number[] = []
let received = 0
const urls = config.urls ?? [config.url]
const instanceOf = (index: number): number => Math.floor(index / config.rooms) % urls.length

interface LoadClient {
  index: number
  doc: Y.Doc
  ws: WebSocket
  map: Y.Map<number>
}

async function openClient(index: number, room: string, token: string): Promise<LoadClient> {
  const doc = new Y.Doc()
  const map = doc.getMap<number>('stamps')
  const key = String(index)
  const mine = instanceOf(index)
  const ws = new WebSocket(`${urls[mine]}/${room}?token=${token}`, { perMessageDeflate: false })
  ws.binaryType = 'nodebuffer'
  doc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin === 'remote' || ws.readyState !== WebSocket.OPEN) return
    const e = encoding.createEncoder()
    encoding.writeVarUint(e, 0)
    syncProtocol.writeUpdate(e, update)
    ws.send(encoding.toUint8Array(e))
  })
  map.observe((event) => {
    if (!measuring) return
    const now = performance.now()
    for (const k of event.keysChanged) {
      const stamp = map.get(k)
      if (k === key || stamp === undefined || stamp < measureFrom) continue
      latencies.push(now - stamp)
      if (instanceOf(Number(k)) !== mine) crossLatencies.push(now - stamp)
    }
  })
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject)
    ws.on('close', (code) => {
      if (code !== 1000 && code !== 1005) reject(new Error(`closed ${code}`))
    })
    ws.on('open', () => {
      const e = encoding.createEncoder()
      encoding.writeVarUint(e, 0)
      syncProtocol.writeSyncStep1(e, doc)
      ws.send(encoding.toUint8Array(e))
    })
    ws.on('message', (data: Buffer) => {
      const decoder = decoding.createDecoder(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
      if (decoding.readVarUint(decoder) !== 0) return // awareness: not measured
      if (measuring) received++
      const reply = encoding.createEncoder()
      encoding.writeVarUint(reply, 0)
      const kind = syncProtocol.readSyncMessage(decoder, reply, doc, 'remote')
      if (encoding.length(reply) > 1) ws.send(encoding.toUint8Array(reply))
      if (kind === syncProtocol.messageYjsSyncStep2) resolve()
    })
  })
  return { index, doc, ws, map }
}

async function openRange(from: number, to: number, clients: LoadClient[]): Promise<void> {
  const tokens = new Map<number, string>()
  for (let i = from; i < to; i += 50) {
    const batch: Array<Promise<LoadClient>> = []
    for (let j = i; j < Math.min(to, i + 50); j++) {
      const room = j % config.rooms
      let token = tokens.get(room)
      if (token === undefined) {
        token = await mintToken(config.secret, `u${room}`, 3600)
        tokens.set(room, token)
      }
      batch.push(openClient(j, `u${room}/bench`, token))
    }
    clients.push(...(await Promise.all(batch)))
  }
}

async function main(): Promise<void> {
  const clients: LoadClient[] = []
  await openRange(0, config.rooms, clients) // one client per room: every document loaded
  send({ type: 'opened', connections: clients.length })
  await waitParent('continue')
  await openRange(config.rooms, config.connections, clients)
  send({ type: 'opened', connections: clients.length })
  await waitParent('continue')

  // Each client writes every writeIntervalMs, spread evenly over the interval.
  const started = performance.now()
  let writes = 0
  let measuredWrites = 0
  let maxLag = 0
  let lastTick = started
  const total = config.warmupMs + config.measureMs
  let cpuStart = process.cpuUsage()
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now()
      maxLag = measuring ? Math.max(maxLag, now - lastTick - 5) : 0
      lastTick = now
      const elapsed = now - started
      if (!measuring && elapsed >= config.warmupMs) {
        measuring = true
        measureFrom = now
        cpuStart = process.cpuUsage()
        send({ type: 'measure-start' })
      }
      if (elapsed >= total) {
        clearInterval(timer)
        resolve()
        return
      }
      const due = Math.floor((elapsed / config.writeIntervalMs) * clients.length)
      for (; writes < due; writes++) {
        const c = clients[writes % clients.length] as LoadClient
        c.map.set(String(c.index), performance.now())
        if (measuring) measuredWrites++
      }
    }, 5)
  })
  const measuredMs = performance.now() - measureFrom
  measuring = false
  const cpu = process.cpuUsage(cpuStart)
  // Let in-flight updates land before reporting.
  send({
    type: 'measure-end',
    latencies,
    crossLatencies,
    writes: measuredWrites,
    received,
    measuredMs,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    maxLoopLagMs: maxLag,
  })
  await waitParent('stop')
  for (const c of clients) c.ws.terminate()
  process.exit(0)
}

main().catch((err: unknown) => {
  console.error('load client failed:', err)
  process.exit(1)
})
