/** Spawns the real relay (apps/relay/src/main.ts) on 127.0.0.1 for sync tests and benchmarks. */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SignJWT } from 'jose'

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..')

/** A running relay child process. */
export interface TestRelay {
  url: string
  /** The relay's data folder (its embedded store). */
  data: string
  /** Mints an HS256 token `{ sub: userId, exp }` for this relay (with `scope`, e.g. 'read' for a read-only token). */
  token(userId: string, ttlSeconds?: number, scope?: string): Promise<string>
  stop(): Promise<void>
}

/** Starts the relay with `--port 0` and a temporary data folder (plus `args`, e.g. limits); resolves once it listens. */
export async function startTestRelay(args: readonly string[] = []): Promise<TestRelay> {
  const secret = `sync-test-${Math.random().toString(36).slice(2)}-secret`
  const data = mkdtempSync(join(tmpdir(), 'engram-sync-relay-'))
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', 'apps/relay/src/main.ts', '--port', '0', '--host', '127.0.0.1', '--data', data, '--secret', secret, ...args],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const output: string[] = []
  const exited = new Promise<void>((done) => child.on('close', () => done()))
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`relay did not start:\n${output.join('\n')}`)), 30_000)
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(line)
        if (line.includes('"msg":"listening"')) {
          clearTimeout(timer)
          done((JSON.parse(line) as { port: number }).port)
        }
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => {
      clearTimeout(timer)
      fail(new Error(`relay exited:\n${output.join('\n')}`))
    })
  })
  const key = new TextEncoder().encode(secret)
  return {
    url: `ws://127.0.0.1:${port}`,
    data,
    token: (userId, ttlSeconds = 3600, scope) =>
      new SignJWT(scope === undefined ? {} : { scope })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(userId)
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      rmSync(data, { recursive: true, force: true })
    },
  }
}
