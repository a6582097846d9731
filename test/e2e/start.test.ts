import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
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
  exited: Promise<number | string | null>
}

function npmStart(args: string[], data: string): Started {
  // detached: its own process group, like a terminal's foreground job, so the test can "press Ctrl-C".
  const child = spawn('npm', ['start', '--', ...args, '--data', data], { cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  return { child, output: () => output, exited }
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
      expect(run.output()).toContain(`127.0.0.1:${port}`)
      expect(run.output()).toContain('--port')
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
})
