/**
 * Relay load benchmark: 1,000 connections across 200 rooms, each client
 * writing small updates, against the Engram relay (auth + SQLite on), the
 * reference `@y/websocket-server@0.1.1` (no auth, no persistence), and two
 * Engram relay instances on PostgreSQL + Redis with each room's clients split
 * across them, in the same run. Relays, PostgreSQL, Redis and load clients run
 * in separate processes, on 127.0.0.1 only; every loop is bounded by time and
 * stops itself.
 *
 * Run alone: `node --conditions=source --import tsx test/bench/relay-load.ts`
 */
import { fork, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import pg from 'pg'
import { median, percentile, printRows, printTable } from './stats.js'
import type { LoadConfig, LoadResult } from './relay-load-client.js'
import { startPostgres, startRedis } from '../../apps/relay/test/services.js'
import type { Service } from '../../apps/relay/test/services.js'

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

type Kind = 'engram' | 'reference' | 'cluster'

/** PostgreSQL and Redis for the cluster runs; one database per run. */
interface ClusterServices {
  postgres: Service
  redis: Service
  runs: number
}

interface ServerRun {
  name: string
  latencies: number[]
  crossLatencies: number[]
  /** CPU of PostgreSQL and Redis during the measured window (cluster runs). */
  backendCpuMs: number
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

/** CPU milliseconds of a process and its live children (PostgreSQL's backends), plus what its exited children used. */
function treeCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  let total = ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100 // + cutime, cstime
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const child = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const f = child.slice(child.lastIndexOf(')') + 2).split(' ')
      if (Number(f[1]) === pid) total += ((Number(f[11]) + Number(f[12])) * 1000) / 100
    } catch {} // exited meanwhile
  }
  return total
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

async function startServer(kind: 'engram' | 'reference', port: number, memFile: string, data: string, extra: string[] = []): Promise<ChildProcess> {
  const profile = process.env.RELAY_BENCH_PROFILE !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${process.env.RELAY_BENCH_PROFILE}`] : []
  const hook = [...profile, '--expose-gc', ...tsxArgs, '--import', pathToFileURL(join(here, 'relay-gc-hook.ts')).href]
  const env = { ...process.env, RELAY_BENCH_MEM_FILE: memFile }
  const child =
    kind === 'engram'
      ? spawn(
          process.execPath,
          [
            ...hook,
            'apps/relay/src/main.ts',
            '--host',
            '127.0.0.1',
            '--port',
            String(port),
            '--data',
            data,
            '--secret',
            secret,
            '--log-level',
            'warn',
            ...extra,
          ],
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

async function runAgainst(kind: Kind, cluster: ClusterServices | null): Promise<ServerRun> {
  const dir = mkdtempSync(join(tmpdir(), `relay-bench-${kind}-`))
  const memFile = join(dir, 'mem.json')
  const servers: ChildProcess[] = []
  const urls: string[] = []
  if (kind === 'cluster') {
    if (cluster === null) throw new Error('cluster runs need PostgreSQL and Redis')
    // A fresh database per run, so each run starts from empty documents like the SQLite runs.
    const database = `bench${++cluster.runs}`
    const admin = new pg.Client({ connectionString: cluster.postgres.url })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${database}`)
    await admin.end()
    const postgresUrl = cluster.postgres.url.replace(/\/postgres$/, `/${database}`)
    for (const id of ['a', 'b']) {
      const port = await freePort()
      servers.push(
        await startServer('engram', port, join(dir, `mem-${id}.json`), join(dir, `data-${id}`), [
          '--store',
          'postgres',
          '--postgres',
          postgresUrl,
          '--redis',
          cluster.redis.url,
          '--instance-id',
          `bench-${id}`,
        ]),
      )
      urls.push(`ws://127.0.0.1:${port}`)
    }
  } else {
    const port = await freePort()
    servers.push(await startServer(kind, port, memFile, join(dir, 'data')))
    urls.push(`ws://127.0.0.1:${port}`)
  }
  const server = servers[0] as ChildProcess
  const port = Number(new URL(urls[0] as string).port)
  const config: LoadConfig = { url: urls[0] as string, urls, secret, ...load }
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
  // Memory is measured on single servers only; a cluster's is the sum of two halves.
  const mem = async (): Promise<{ js: number; rss: number }> => (kind === 'cluster' ? { js: NaN, rss: NaN } : await memory(server, memFile))
  const relayCpu = (): number => servers.reduce((sum, child) => sum + cpuMs(child.pid as number), 0)
  const backendCpu = (): number => (cluster === null || kind !== 'cluster' ? 0 : treeCpuMs(cluster.postgres.pid as number) + cpuMs(cluster.redis.pid as number))
  try {
    const idle = await mem()
    await next('opened')
    const withDocs = await mem()
    client.send({ type: 'continue' })
    await next('opened')
    const withConns = await mem()
    client.send({ type: 'continue' })
    await next('measure-start')
    const cpu0 = relayCpu()
    const backend0 = backendCpu()
    const result = await next<LoadResult & { type: string }>('measure-end')
    const cpu1 = relayCpu()
    const backend1 = backendCpu()
    const after = await mem()
    if (kind !== 'reference') {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
      const pick = (name: string): string =>
        text
          .split('\n')
          .filter((l) => l.startsWith(name))
          .map((l) => l.slice(name.length))
          .join(' ')
      console.log(
        `${kind} relay during the run: event-loop delay ${pick('nodejs_eventloop_delay_seconds')}; ${pick('engram_relay_persisted_updates_total')} updates persisted in ${pick('engram_relay_persist_seconds_count')} commits taking ${pick('engram_relay_persist_seconds_sum')} s`,
      )
    }
    client.send({ type: 'stop' })
    const perConnection = (withConns.js - withDocs.js) / (load.connections - load.rooms)
    const perDocument = (withDocs.js - idle.js - perConnection * load.rooms) / load.rooms
    const seconds = result.measuredMs / 1000
    return {
      name: kind,
      latencies: result.latencies,
      crossLatencies: result.crossLatencies,
      backendCpuMs: backend1 - backend0,
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
    for (const child of servers) child.kill(process.env.RELAY_BENCH_PROFILE !== undefined ? 'SIGINT' : 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, process.env.RELAY_BENCH_PROFILE !== undefined ? 3000 : 300))
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Pooled {
  name: string
  latencies: number[]
  crossLatencies: number[]
  backendCpuUsPerWrite: number
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
    crossLatencies: runs.flatMap((r) => r.crossLatencies),
    backendCpuUsPerWrite: (sum((r) => r.backendCpuMs) * 1000) / sum((r) => r.writes),
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

async function startServices(): Promise<{ postgres: Service; redis: Service }> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()])
  return { postgres, redis }
}

/** Two instances on PostgreSQL + Redis beside one SQLite relay, same load. */
function printClusterTable(cluster: Pooled, single: Pooled, runs: ServerRun[]): void {
  const baselineName = 'one relay on SQLite'
  printTable("Relay across 2 instances (PostgreSQL + Redis pub/sub; each room's clients split across both) vs one SQLite relay", [
    { name: 'cross-instance propagation median', ours: median(cluster.crossLatencies), baseline: median(single.latencies), unit: 'ms', baselineName },
    {
      name: 'cross-instance propagation p99',
      ours: percentile(cluster.crossLatencies, 99),
      baseline: percentile(single.latencies, 99),
      unit: 'ms',
      baselineName,
      goal: '< 50 ms',
    },
    {
      name: 'all propagation p99 (same and other instance)',
      ours: percentile(cluster.latencies, 99),
      baseline: percentile(single.latencies, 99),
      unit: 'ms',
      baselineName,
    },
    { name: 'relay CPU per client update (both instances)', ours: cluster.cpuUsPerWrite, baseline: single.cpuUsPerWrite, unit: 'µs', baselineName },
    {
      name: 'CPU per client update incl. PostgreSQL + Redis',
      ours: cluster.cpuUsPerWrite + cluster.backendCpuUsPerWrite,
      baseline: single.cpuUsPerWrite,
      unit: 'µs',
      baselineName,
    },
    {
      name: 'messages per second (sent + received by clients)',
      ours: cluster.messagesPerSecond,
      baseline: single.messagesPerSecond,
      unit: 'msg/s',
      baselineName,
    },
  ])
  console.log(
    `cluster: ${cluster.crossLatencies.length} cross-instance samples of ${cluster.latencies.length}; per-run cross median / p99 (ms): ` +
      runs
        .filter((r) => r.name === 'cluster')
        .map((r) => `${median(r.crossLatencies).toFixed(1)} / ${percentile(r.crossLatencies, 99).toFixed(1)}`)
        .join(', '),
  )
}

/** Run the relay load benchmark and print its tables. */
export async function runRelayBench(): Promise<void> {
  if (process.env.RELAY_BENCH_SKIP_TRANSPORT === undefined) await (await import('./relay-redis-transport.js')).runRedisTransportBench()
  console.log(
    `\nRelay load: ${load.connections} connections / ${load.rooms} rooms, each client writes every ${load.writeIntervalMs} ms; ` +
      `${load.warmupMs / 1000} s warm-up, ${load.measureMs / 1000} s measured per run; load clients in a separate process; 127.0.0.1.`,
  )
  // ABBA-style order, pooled per server, so drift in the machine's load hits all alike.
  const order = (process.env.RELAY_BENCH_ORDER?.split(',') ?? ['engram', 'cluster', 'reference', 'reference', 'cluster', 'engram']) as Kind[]
  const cluster: ClusterServices | null = order.includes('cluster') ? { ...(await startServices()), runs: 0 } : null
  const runs: ServerRun[] = []
  try {
    for (const kind of order) runs.push(await runAgainst(kind, cluster))
  } finally {
    await cluster?.postgres.stop()
    await cluster?.redis.stop()
  }
  const ours = pool(runs.filter((r) => r.name === 'engram'))
  const ref = pool(runs.filter((r) => r.name === 'reference'))
  if (cluster !== null) printClusterTable(pool(runs.filter((r) => r.name === 'cluster')), ours, runs)
  if (ref.latencies.length === 0) return
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
