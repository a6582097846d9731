/**
 * Test helpers: real `redis-server` and PostgreSQL processes on free ports of
 * 127.0.0.1 with throw-away data folders (Debian packages `redis-server` and
 * `postgresql`). Missing binaries fail the test with a message saying what
 * to install; nothing is skipped.
 */
import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
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

/** A service process that can be stopped and started again on the same port and data. */
export interface Service {
  readonly url: string
  readonly port: number
  /** The server's process id while it runs (PostgreSQL: the postmaster). */
  readonly pid: number | undefined
  /** Stop it (`SIGKILL` for a crash; the default is a clean shutdown). */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Start it again after `stop`, same port and data. */
  start(): Promise<void>
}

/** Spawn and resolve once a line matching `ready` is printed. */
async function spawnUntil(command: string, args: string[], ready: RegExp, options: { uid?: number; gid?: number } = {}): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options })
  const output: string[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${command} did not start:\n${output.join('')}`))
    }, 30_000)
    const onData = (chunk: Buffer): void => {
      output.push(chunk.toString())
      if (ready.test(output.join(''))) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited (${String(code)}):\n${output.join('')}`))
    })
  })
  child.removeAllListeners('exit')
  running.add(child)
  child.once('exit', () => {
    running.delete(child)
  })
  return child
}

/** Services still running: a test process that ends without stopping them must not leave them behind. */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

async function kill(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve()
    })
  })
  child.kill(signal)
  await exited
}

/**
 * Start `redis-server` without persistence on a free port.
 *
 * @throws Error when `redis-server` is not installed (`apt-get install redis-server`).
 */
export async function startRedis(): Promise<Service> {
  const bin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(existsSync)
  if (bin === undefined) throw new Error('redis-server is not installed: apt-get install -y redis-server')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'engram-redis-'))
  let child: ChildProcess | null = null
  const service: Service = {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid
    },
    async start() {
      child = await spawnUntil(
        bin,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        /Ready to accept connections/,
      )
    },
    async stop(signal = 'SIGTERM') {
      await kill(child, signal)
      child = null
    },
  }
  await service.start()
  return service
}

function postgresBin(): string {
  const root = '/usr/lib/postgresql'
  const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined
  const bin = version === undefined ? undefined : join(root, version, 'bin')
  if (bin === undefined || !existsSync(join(bin, 'postgres'))) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql')
  return bin
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {}
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  }
}

/**
 * Initialise a throw-away cluster and start PostgreSQL on a free port (trust
 * auth on 127.0.0.1, database `postgres`).
 *
 * @throws Error when PostgreSQL is not installed (`apt-get install postgresql`).
 */
export async function startPostgres(): Promise<Service> {
  const bin = postgresBin()
  const user = postgresUser()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'engram-pg-'))
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid)
  execFileSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'], { ...user, stdio: 'ignore' })
  let child: ChildProcess | null = null
  const service: Service = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    get pid() {
      return child?.pid
    },
    async start() {
      child = await spawnUntil(
        join(bin, 'postgres'),
        ['-D', join(dir, 'data'), '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=200'],
        /database system is ready to accept connections/,
        user,
      )
    },
    async stop(signal = 'SIGINT') {
      // SIGINT is PostgreSQL's fast shutdown: sessions are ended, the data is kept.
      await kill(child, signal)
      child = null
    },
  }
  await service.start()
  return service
}
