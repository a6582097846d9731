/**
 * Relay load benchmark: 1,000 connections across 200 rooms, each client
 * writing small updates, against the Engram relay (auth + SQLite on) and the
 * reference `@y/websocket-server@0.1.1` (no auth, no persistence) in the same
 * run. Relays and load clients run in separate processes, on 127.0.0.1 only;
 * every loop is bounded by time and stops itself.
 *
 * Run alone: `node --conditions=source --import tsx test/bench/relay-load.ts`
 */
import { fork, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { median, percentile, printRows, printTable } from './stats.js'
import type { LoadConfig, LoadResult } from './relay-load-client.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const root = resolve(here, '../..')
const secret = 'relay-bench-secret-0123456789abcdef'
const envNumber = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
/** The load; RELAY_BENCH_* environment variables override it for experiments. */
const load = {
  rooms: envNumber('RELAY_BENCH_ROOMS', 200),
  connections: envNumber('RELAY_BENCH_CONNECTIONS', 1000),
  writeIntervalMs: envNumber('RELAY_BENCH_WRITE_INTERVAL_MS', 1000),
  warmupMs: 3000,
  measureMs: envNumber('RELAY_BENCH_MEASURE_MS', 10_000),
}
const tsxArgs = ['--conditions=source', '--import', 'tsx']

interface ServerRun {
  name: string
  latencies: number[]
  messages: number
  writes: number
  seconds: number
  cpuMs: number
  memPerConnectionKb: number
  memPerDocumentKb: number
  rssMb: number
  clientCpuShare: number
  maxLoopLagMs: number
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      srv.close(() => {
        resolve(port)
      })
    })
  })
}

/** CPU milliseconds (user + system) of a process, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime + stime in clock ticks (USER_HZ = 100)
}

/** GC the relay (via the preloaded hook) and read its heap + external memory in bytes. */
async function memory(child: ChildProcess, file: string): Promise<{ js: number; rss: number }> {
  rmSync(file, { force: true })
  child.kill('SIGUSR2')
  const until = Date.now() + 30_000
  while (!existsSync(file)) {
    if (Date.now() > until) throw new Error('relay did not report memory')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const m = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number; external: number; rss: number }
  return { js: m.heapUsed + m.external, rss: m.rss }
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const until = Date.now() + 20_000
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`)
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error('relay did not start')
}

async function startServer(kind: 'engram' | 'reference', port: number, memFile: string, data: string): Promise<ChildProcess> {
  const profile = process.env.RELAY_BENCH_PROFILE !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${process.env.RELAY_BENCH_PROFILE}`] : []
  const hook = [...profile, '--expose-gc', ...tsxArgs, '--import', pathToFileURL(join(here, 'relay-gc-hook.ts')).href]
  const env = { ...process.env, RELAY_BENCH_MEM_FILE: memFile }
  const child =
    kind === 'engram'
      ? spawn(
          process.execPath,
          [...hook, 'apps/relay/src/main.ts', '--host', '127.0.0.1', '--port', String(port), '--data', data, '--secret', secret, '--log-level', 'warn'],
          { cwd: root, env, stdio: 'inherit' },
        )
      : spawn(process.execPath, [...hook, 'node_modules/@y/websocket-server/src/server.js'], {
          cwd: root,
          env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
          stdio: ['ignore', 'ignore', 'inherit'],
        })
  await waitHealthy(`http://127.0.0.1:${port}/healthz`, child)
  return child
}

async function runAgainst(kind: 'engram' | 'reference'): Promise<ServerRun> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), `relay-bench-${kind}-`))
  const memFile = join(dir, 'mem.json')
  const server = await startServer(kind, port, memFile, join(dir, 'data'))
  const config: LoadConfig = { url: `ws://127.0.0.1:${port}`, secret, ...load }
  const client = fork(join(here, 'relay-load-client.ts'), [JSON.stringify(config)], {
    cwd: root,
    execArgv: tsxArgs,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const next = async <T extends { type: string }>(type: string): Promise<T> =>
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`load client: no ${type} in 90 s`))
      }, 90_000)
      const on = (m: T): void => {
        if (m.type === type) {
          clearTimeout(timer)
          client.off('message', on)
          resolve(m)
        }
      }
      client.on('message', on)
      client.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`load client exited ${code}`))
      })
    })
  try {
    const idle = await memory(server, memFile)
    await next('opened')
    const withDocs = await memory(server, memFile)
    client.send({ type: 'continue' })
    await next('opened')
    const withConns = await memory(server, memFile)
    client.send({ type: 'continue' })
    await next('measure-start')
    const cpu0 = cpuMs(server.pid as number)
    const result = await next<LoadResult & { type: string }>('measure-end')
    const cpu1 = cpuMs(server.pid as number)
    const after = await memory(server, memFile)
    if (kind === 'engram') {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
      const pick = (name: string): string =>
        text
          .split('\n')
          .filter((l) => l.startsWith(name))
          .map((l) => l.slice(name.length))
          .join(' ')
      console.log(
        `engram relay during the run: event-loop delay ${pick('nodejs_eventloop_delay_seconds')}; ${pick('engram_relay_persisted_updates_total')} updates persisted in ${pick('engram_relay_persist_seconds_count')} commits taking ${pick('engram_relay_persist_seconds_sum')} s`,
      )
    }
    client.send({ type: 'stop' })
    const perConnection = (withConns.js - withDocs.js) / (load.connections - load.rooms)
    const perDocument = (withDocs.js - idle.js - perConnection * load.rooms) / load.rooms
    const seconds = result.measuredMs / 1000
    return {
      name: kind,
      latencies: result.latencies,
      messages: result.writes + result.received,
      writes: result.writes,
      seconds,
      cpuMs: cpu1 - cpu0,
      memPerConnectionKb: perConnection / 1024,
      memPerDocumentKb: perDocument / 1024,
      rssMb: after.rss / 1e6,
      clientCpuShare: result.clientCpuMs / result.measuredMs,
      maxLoopLagMs: result.maxLoopLagMs,
    }
  } finally {
    client.kill('SIGKILL')
    server.kill(process.env.RELAY_BENCH_PROFILE !== undefined ? 'SIGINT' : 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, process.env.RELAY_BENCH_PROFILE !== undefined ? 3000 : 300))
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Pooled {
  name: string
  latencies: number[]
  messagesPerSecond: number
  writesPerSecond: number
  cpuUsPerWrite: number
  memPerConnectionKb: number
  memPerDocumentKb: number
  rssMb: number
  clientCpuShare: number
  maxLoopLagMs: number
}

function pool(runs: ServerRun[]): Pooled {
  const sum = (f: (r: ServerRun) => number): number => runs.reduce((a, r) => a + f(r), 0)
  const mean = (f: (r: ServerRun) => number): number => sum(f) / runs.length
  const seconds = sum((r) => r.seconds)
  return {
    name: runs[0]?.name ?? '?',
    latencies: runs.flatMap((r) => r.latencies),
    messagesPerSecond: sum((r) => r.messages) / seconds,
    writesPerSecond: sum((r) => r.writes) / seconds,
    cpuUsPerWrite: (sum((r) => r.cpuMs) * 1000) / sum((r) => r.writes),
    memPerConnectionKb: mean((r) => r.memPerConnectionKb),
    memPerDocumentKb: mean((r) => r.memPerDocumentKb),
    rssMb: mean((r) => r.rssMb),
    clientCpuShare: mean((r) => r.clientCpuShare),
    maxLoopLagMs: Math.max(...runs.map((r) => r.maxLoopLagMs)),
  }
}

/** Run the relay load benchmark and print its tables. */
export async function runRelayBench(): Promise<void> {
  console.log(
    `\nRelay load: ${load.connections} connections / ${load.rooms} rooms, each client writes every ${load.writeIntervalMs} ms; ` +
      `${load.warmupMs / 1000} s warm-up, ${load.measureMs / 1000} s measured per run; load clients in a separate process; 127.0.0.1.`,
  )
  // ABBA order, pooled per server, so drift in the machine's load hits both alike.
  const runs: ServerRun[] = []
  const order = process.env.RELAY_BENCH_ORDER?.split(',') as Array<'engram' | 'reference'> | undefined
  for (const kind of order ?? (['engram', 'reference', 'reference', 'engram'] as const)) runs.push(await runAgainst(kind))
  const ours = pool(runs.filter((r) => r.name === 'engram'))
  const ref = pool(runs.filter((r) => r.name === 'reference'))
  const baselineName = '@y/websocket-server 0.1.1'
  printTable('Relay under load: Engram relay (JWT auth + SQLite WAL) vs reference server (no auth, no persistence)', [
    { name: 'propagation latency median', ours: median(ours.latencies), baseline: median(ref.latencies), unit: 'ms', baselineName, goal: '≤ 1.5× reference' },
    {
      name: 'propagation latency p99',
      ours: percentile(ours.latencies, 99),
      baseline: percentile(ref.latencies, 99),
      unit: 'ms',
      baselineName,
      goal: '≤ 1.5× reference, < 50 ms',
    },
    { name: 'messages per second (sent + received by clients)', ours: ours.messagesPerSecond, baseline: ref.messagesPerSecond, unit: 'msg/s', baselineName },
    { name: 'relay CPU per client update', ours: ours.cpuUsPerWrite, baseline: ref.cpuUsPerWrite, unit: 'µs', baselineName, goal: '≤ 1.3× reference' },
    { name: 'memory per connection (heap + external)', ours: ours.memPerConnectionKb, baseline: ref.memPerConnectionKb, unit: 'KiB', baselineName },
    { name: 'memory per loaded document (heap + external)', ours: ours.memPerDocumentKb, baseline: ref.memPerDocumentKb, unit: 'KiB', baselineName },
    { name: 'relay RSS after the run', ours: ours.rssMb, baseline: ref.rssMb, unit: 'MB', baselineName },
  ])
  printRows(
    'Relay load: run conditions (two runs per server, ABBA, pooled)',
    ['server', 'updates/s written', 'latency samples', 'load-client CPU share', 'load-client max loop lag (ms)', 'per-run median / p99 (ms)'],
    [ours, ref].map((r) => [
      r.name,
      r.writesPerSecond,
      r.latencies.length,
      `${(r.clientCpuShare * 100).toFixed(0)} %`,
      r.maxLoopLagMs,
      runs
        .filter((x) => x.name === r.name)
        .map((x) => `${median(x.latencies).toFixed(1)} / ${percentile(x.latencies, 99).toFixed(1)}`)
        .join(', '),
    ]),
  )
  console.log(
    `machine load average during the run: ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')} (${cpus().length} cores)`,
  )
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRelayBench().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err)
      process.exit(1)
    },
  )
}
