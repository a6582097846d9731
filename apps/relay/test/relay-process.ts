/** Test helpers: spawn the real relay (`main.ts`) on 127.0.0.1 and connect stock y-websocket clients. */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import { mintToken } from '../src/auth/tokens.js'

export const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..')
export const testSecret = 'relay-test-secret-0123456789abcdef'

/** A relay child process. */
export interface RelayProcess {
  child: ChildProcess
  port: number
  /** ws://127.0.0.1:port */
  wsUrl: string
  /** http://127.0.0.1:port */
  httpUrl: string
  data: string
  /** Every stdout/stderr line so far. */
  output: string[]
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>
  stop(signal?: NodeJS.Signals): Promise<number | string>
}

/** A fresh temporary data folder. */
export function tempDataDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `engram-relay-${name}-`))
}

/** Start `main.ts` with `--port 0` and wait for its "listening" log line. */
export async function startRelay(options: { data?: string; args?: string[]; nodeArgs?: string[] } = {}): Promise<RelayProcess> {
  const data = options.data ?? tempDataDir('t')
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      '--conditions=source',
      '--import',
      'tsx',
      'apps/relay/src/main.ts',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      data,
      '--secret',
      testSecret,
      ...(options.args ?? []),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const output: string[] = []
  const exited = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => {
      resolve(code ?? signal ?? -1)
    })
  })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error('relay did not start:\n' + output.join('\n')))
    }, 20_000)
    const onLine = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(line)
        if (line.includes('"msg":"listening"')) {
          clearTimeout(timer)
          resolve((JSON.parse(line) as { port: number }).port)
        }
      }
    }
    child.stdout.on('data', onLine)
    child.stderr.on('data', onLine)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`relay exited (${code}):\n${output.join('\n')}`))
    })
  })
  return {
    child,
    port,
    wsUrl: `ws://127.0.0.1:${port}`,
    httpUrl: `http://127.0.0.1:${port}`,
    data,
    output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return await exited
    },
  }
}

/** Prometheus text → map of series (`name` or `name{labels}`) to value. */
export async function scrape(relay: RelayProcess, gc = false): Promise<Map<string, number>> {
  const text = await (await fetch(`${relay.httpUrl}/metrics${gc ? '?gc=1' : ''}`)).text()
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** A token for `user` signed with the test secret. */
export async function tokenFor(user: string, ttlSeconds = 600): Promise<string> {
  return await mintToken(testSecret, user, ttlSeconds)
}

/** A stock y-websocket client. */
export interface Client {
  doc: Y.Doc
  provider: WebsocketProvider
  /** Resolves when the first sync completed. */
  synced: Promise<void>
  /** Resolves with the first close code the server sent. */
  firstClose: Promise<number>
  destroy(): void
}

/** Connect a stock `WebsocketProvider` (with `ws` as its WebSocket) to `room`. */
export function connectClient(relay: RelayProcess, room: string, token: string | null): Client {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(relay.wsUrl, room, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    params: token === null ? {} : { token },
    disableBc: true,
  })
  const synced = new Promise<void>((resolve) => {
    if (provider.synced) resolve()
    provider.once('sync', (s: boolean) => {
      if (s) resolve()
    })
  })
  const firstClose = new Promise<number>((resolve) => {
    provider.on('connection-close', (event: CloseEvent | null) => {
      if (event !== null) resolve(event.code)
    })
  })
  return {
    doc,
    provider,
    synced,
    firstClose,
    destroy() {
      provider.destroy()
      doc.destroy()
    },
  }
}

/** Poll `check` until it returns true or `ms` pass. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Run `main.ts` with `args` (a subcommand such as `revoke`) and resolve with its exit code and output. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/relay/src/main.ts', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  const code = await new Promise<number | null>((resolve) => {
    child.on('close', resolve)
  })
  return { code, out }
}
