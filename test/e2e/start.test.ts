import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** `npm start` as a newcomer runs it: a real process group, stopped with Ctrl-C (SIGINT to the group). */
const repo = fileURLToPath(new URL('../..', import.meta.url))

interface Started {
  child: ChildProcess
  output: () => string
  /** What the processes wrote to stderr (npm writes its banner to stdout). */
  errors: () => string
  exited: Promise<number | string | null>
}

function npmStart(args: string[], data: string): Started {
  // detached: its own process group, like a terminal's foreground job, so the test can "press Ctrl-C".
  const child = spawn('npm', ['start', '--', ...args, '--data', data], { cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let errors = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
    errors += chunk.toString()
  })
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  return { child, output: () => output, errors: () => errors, exited }
}

/** Starts `npm start --no-build` on free ports and resolves with the ports once both listen (the build has its own test). */
async function startedWithoutBuild(data: string): Promise<{ run: Started; demoPort: number; relayPort: number }> {
  const run = npmStart(['--port', '0', '--relay-port', '0', '--no-build'], data)
  const [demoPort, relayPort] = await waitFor(
    () => {
      const demo = /Engram demo\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(run.output())?.[1]
      const relay = /Engram relay\s+ws:\/\/127\.0\.0\.1:(\d+)/.exec(run.output())?.[1]
      return demo && relay ? [Number(demo), Number(relay)] : undefined
    },
    60_000,
    `the URLs in:\n${run.output()}`,
  )
  return { run, demoPort, relayPort }
}

/** Whether a TCP port on 127.0.0.1 can be listened on (nothing holds it). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createTcpServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

function killGroup(run: Started): void {
  try {
    process.kill(-run.child.pid!, 'SIGKILL')
  } catch {
    /* already gone */
  }
}

/** Every process of a process group (Linux `ps`). */
function groupMembers(pgid: number): string[] {
  const ps = spawnSync('ps', ['-eo', 'pgid=,pid=,args='], { encoding: 'utf8' })
  return ps.stdout.split('\n').filter((line) => line.trim().split(/\s+/)[0] === String(pgid))
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('npm start', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engram-start-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('builds, serves the demo, the dev tokens and the relay on 127.0.0.1, and stops every process on Ctrl-C', async () => {
    const run = npmStart(['--port', '0', '--relay-port', '0'], join(dir, 'data'))
    try {
      const [demo, health] = await waitFor(
        () => {
          const demoUrl = /Engram demo\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(run.output())?.[1]
          const healthUrl = /health: (http:\/\/127\.0\.0\.1:\d+\/healthz)/.exec(run.output())?.[1]
          return demoUrl && healthUrl ? ([demoUrl, healthUrl] as const) : undefined
        },
        90_000,
        `the URLs in:\n${run.output()}`,
      )
      const page = await fetch(`${demo}/?device=A`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('Opening memory')
      const token = (await (await fetch(`${demo}/dev-token?user=demo-user`)).json()) as { token?: string }
      expect(token.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
      expect((await fetch(`${demo}/dev-token?user=a/b`)).status).toBe(400)
      expect(await (await fetch(health)).json()).toMatchObject({ status: 'ok' })
      // The development secret is kept in the data folder, not printed.
      expect(run.output()).not.toContain(token.token!)

      expect(groupMembers(run.child.pid!).some((line) => line.includes('apps/relay/src/main.ts'))).toBe(true)
      process.kill(-run.child.pid!, 'SIGINT')
      // npm itself dies of the SIGINT; the start script and the relay stop gracefully.
      expect([0, 'SIGINT']).toContain(await run.exited)
      await waitFor(() => (groupMembers(run.child.pid!).length === 0 ? true : undefined), 10_000, 'every process of npm start to end')
      expect(run.output()).toContain('stopped.')
      expect(run.output()).not.toContain('stopped unexpectedly')
      await expect(fetch(health)).rejects.toThrow()
    } finally {
      try {
        process.kill(-run.child.pid!, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  })

  it('says which port is taken and leaves no relay behind when the demo port is in use', async () => {
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as AddressInfo).port
    const run = npmStart(['--port', String(port), '--relay-port', '0', '--no-build'], join(dir, 'busy'))
    try {
      expect(await run.exited).toBe(1)
      // One line that names the flag, no EADDRINUSE stack.
      expect(run.errors().trimEnd().split('\n')).toEqual([
        `npm start: 127.0.0.1:${port} is already in use; start the demo on another port with --port <port> (0 picks a free one)`,
      ])
      expect(run.output()).not.toContain('stopped unexpectedly')
      await waitFor(() => (groupMembers(run.child.pid!).length === 0 ? true : undefined), 10_000, 'the relay to end')
    } finally {
      taken.close()
      try {
        process.kill(-run.child.pid!, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  })

  it('says in one line that the relay port is taken, naming --relay-port', async () => {
    const taken: Server = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as AddressInfo).port
    const run = npmStart(['--port', '0', '--relay-port', String(port), '--no-build'], join(dir, 'busy-relay'))
    try {
      expect(await run.exited).toBe(1)
      expect(run.errors().trimEnd().split('\n')).toEqual([
        `npm start: 127.0.0.1:${port} is already in use; start the relay on another port with --relay-port <port> (0 picks a free one)`,
      ])
      await waitFor(() => (groupMembers(run.child.pid!).length === 0 ? true : undefined), 10_000, 'every process to end')
    } finally {
      taken.close()
      killGroup(run)
    }
  })

  it.each(['SIGTERM', 'SIGINT'] as const)('%s to the npm process alone stops the demo server and the relay: both ports are free', async (signal) => {
    const { run, demoPort, relayPort } = await startedWithoutBuild(join(dir, `npm-${signal}`))
    try {
      expect(await portIsFree(demoPort)).toBe(false)
      expect(await portIsFree(relayPort)).toBe(false)
      process.kill(run.child.pid!, signal) // npm only, not its process group
      await run.exited
      await waitFor(() => (groupMembers(run.child.pid!).length === 0 ? true : undefined), 10_000, 'every process of npm start to end')
      expect(await portIsFree(demoPort)).toBe(true)
      expect(await portIsFree(relayPort)).toBe(true)
      expect(run.output()).toContain(`${signal}: stopping…`)
      expect(run.output()).toContain('stopped.')
    } finally {
      killGroup(run)
    }
  })

  it('SIGTERM to the relay process stops the demo server and npm as well', async () => {
    const { run, demoPort, relayPort } = await startedWithoutBuild(join(dir, 'relay-sigterm'))
    try {
      const relayLine = groupMembers(run.child.pid!).find((line) => line.includes('apps/relay/src/main.ts'))
      expect(relayLine).toBeDefined()
      process.kill(Number(relayLine!.trim().split(/\s+/)[1]), 'SIGTERM')
      expect(await run.exited).toBe(0)
      await waitFor(() => (groupMembers(run.child.pid!).length === 0 ? true : undefined), 10_000, 'every process of npm start to end')
      expect(await portIsFree(demoPort)).toBe(true)
      expect(await portIsFree(relayPort)).toBe(true)
      expect(run.output()).toContain('the relay stopped: stopping…')
      expect(run.output()).not.toContain('stopped unexpectedly')
    } finally {
      killGroup(run)
    }
  })
})
