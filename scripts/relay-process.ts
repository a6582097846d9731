import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** Where and how to run the relay child process. */
export interface RelayProcessOptions {
  host?: string
  /** 0 picks a free port. */
  port?: number
  /** The relay's data folder (SQLite). */
  data: string
  /** The token signing secret. */
  secret: string
  /** Forward the relay's JSON log lines to this writer; default: drop them. */
  log?: (line: string) => void
}

/** A running relay child process. */
export interface RelayProcess {
  /** `ws://host:port`, for y-websocket clients. */
  readonly url: string
  readonly port: number
  /** Resolves with the exit code (or signal) when the process ends, for whatever reason. */
  readonly exited: Promise<number | string | null>
  /** Stops it with SIGTERM (graceful: flush, close sockets), SIGKILL after 5 s. Idempotent. */
  stop(): Promise<void>
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
const relayMain = fileURLToPath(new URL('../apps/relay/src/main.ts', import.meta.url))

/**
 * Starts `apps/relay` as a child process (the same command as `npm run relay`)
 * and resolves once it listens.
 *
 * @throws Error when the relay exits or does not listen within 20 s.
 */
export async function startRelayProcess(options: RelayProcessOptions): Promise<RelayProcess> {
  const host = options.host ?? '127.0.0.1'
  const args = ['--conditions=source', '--import', 'tsx', relayMain, '--host', host, '--port', String(options.port ?? 0), '--data', options.data]
  // The secret goes through the environment, not argv: argv is visible to every local user in `ps`.
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ENGRAM_RELAY_SECRET: options.secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  const port = await waitForListening(child, `${host}:${options.port ?? 0}`, options.log)
  let stopped: Promise<void> | undefined
  return {
    url: `ws://${host}:${port}`,
    port,
    exited,
    stop: () => (stopped ??= stopChild(child)),
  }
}

function waitForListening(child: ChildProcess, address: string, log?: (line: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('relay did not start within 20 s\n' + stderr))
    }, 20_000)
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      log?.(chunk.toString().trimEnd())
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      // A taken port is the caller's to explain (which flag picks another), not a stack trace.
      if (stderr.includes('EADDRINUSE')) reject(Object.assign(new Error(`address already in use ${address}`), { code: 'EADDRINUSE', address }))
      else reject(new Error(`relay exited with code ${code}\n${stderr}`))
    })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      log?.(line)
      const entry = parseLine(line)
      if (entry?.msg === 'listening' && typeof entry.port === 'number') {
        clearTimeout(timer)
        resolve(entry.port)
      }
    })
  })
}

function parseLine(line: string): { msg?: unknown; port?: unknown } | undefined {
  try {
    return JSON.parse(line) as { msg?: unknown; port?: unknown }
  } catch {
    return undefined
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill('SIGTERM')
  })
}
