import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, type Profile } from './support/chromium.js'
import { serveStatic, type StaticServer } from './support/static-server.js'

/*
 * Engram as an app outside this repository gets it: every package packed with
 * `npm pack`, the tarballs installed together (one `npm install`, so no
 * @engram/* package comes from the registry) into a fresh app in a temporary
 * folder, with its other dependencies from the npm registry; the app built
 * with Vite (the worker host through `connectMemory`, sync, React hooks),
 * type-checked with `tsc` without `skipLibCheck` (the app's code), and run in Chromium on two
 * profiles that sync through the packed relay started with `npx engram-relay`.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
const packages = ['packages/core', 'packages/sync', 'packages/worker', 'packages/langgraph', 'packages/ai-sdk', 'packages/react', 'apps/relay']
const repoPackage = (name: string) => JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }

interface Packed {
  name: string
  filename: string
  files: { path: string }[]
}

interface Manifest {
  exports?: Record<string, string | Record<string, string>>
  bin?: Record<string, string>
}

/** Files a tarball's package.json points at (export conditions other than `source`, bins) that the tarball lacks. */
function missingFiles(packed: Packed, manifest: Manifest): string[] {
  const shipped = new Set(packed.files.map((f) => f.path))
  const targets = Object.values(manifest.exports ?? {}).flatMap((entry) =>
    typeof entry === 'string' ? [entry] : Object.entries(entry).flatMap(([condition, target]) => (condition === 'source' ? [] : [target])),
  )
  return [...targets, ...Object.values(manifest.bin ?? {}), 'README.md', 'LICENSE', 'package.json']
    .map((path) => path.replace(/^\.\//, ''))
    .filter((path) => !shipped.has(path))
    .map((path) => `${packed.name}: ${path}`)
}

const appFiles: Record<string, string> = {
  'index.html': `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>adoption</title></head>
<body><div id="root"></div><script type="module" src="/src/main.ts"></script></body></html>
`,
  'vite.config.ts': `import { defineConfig } from 'vite'
export default defineConfig({ worker: { format: 'es' }, optimizeDeps: { include: ['@engram/worker/host'] } })
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      module: 'ESNext',
      moduleResolution: 'Bundler',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: [],
    },
    // The app's code: worker, core, sync and React declarations, and React's own. (The adapters' frameworks
    // do not pass without skipLibCheck by themselves: `ai` and `@langchain/core` want Node's types and ESNext.)
    include: ['src'],
  }),
  'src/memory.worker.ts': `import '@engram/worker/host'
`,
  'src/main.ts': `import { connectMemory } from '@engram/worker'
import { MemoryProvider, useFacts, useSyncStatus } from '@engram/react'
import { createElement as h } from 'react'
import { createRoot } from 'react-dom/client'

const params = new URLSearchParams(location.search)
const worker = new Worker(new URL('./memory.worker.ts', import.meta.url), { type: 'module' })
const token = params.get('token') ?? ''
const memory = await connectMemory(worker, { appId: 'adoption', userId: params.get('user') ?? 'u1', sync: { url: params.get('relay') ?? '', token: () => token } })
await memory.projects.update('user', { sync: { enabled: true } })

function Facts() {
  const facts = useFacts('user')
  const sync = useSyncStatus('user')
  return h(
    'div',
    {},
    h('p', { id: 'sync' }, String(sync.data ?? '')),
    h('ul', { id: 'facts' }, (facts.data?.items ?? []).map((f) => h('li', { key: f.key }, f.key + '=' + JSON.stringify(f.value)))),
  )
}
createRoot(document.getElementById('root')!).render(h(MemoryProvider, { memory }, h(Facts)))
Object.assign(window, { memory })
document.body.dataset.ready = 'true'
`,
}

/** The relay installed from its tarball, started with `npx engram-relay` (own process group). */
async function startRelay(app: string, data: string, secret: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn('npx', ['engram-relay', '--host', '127.0.0.1', '--port', '0', '--data', data], {
    cwd: app,
    env: { ...process.env, ENGRAM_RELAY_SECRET: secret },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    void exited.then(() => reject(new Error(`engram-relay exited:\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number }
      if (entry.msg === 'listening' && entry.port !== undefined) resolve(entry.port)
    })
  })
  return {
    url: `ws://127.0.0.1:${port}`,
    async stop() {
      process.kill(-child.pid!, 'SIGTERM')
      await exited
    },
  }
}

describe('adoption: the packed packages in a fresh Vite app', () => {
  let dir: string
  let app: string
  let installLog: string
  let server: StaticServer | undefined
  let relay: { url: string; stop: () => Promise<void> } | undefined
  const profiles: Profile[] = []
  const secret = `adoption-${Math.random().toString(36).slice(2)}`
  const packed: Packed[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engram-adoption-'))
    app = join(dir, 'app')
    const tarballs = join(dir, 'tarballs')
    mkdirSync(tarballs)
    // Each package's prepack builds it and drops dist files whose source is gone; the relay's builds it.
    await run(process.execPath, ['--import', 'tsx', join(repo, 'scripts/prune-dist.ts')], { cwd: join(repo, 'apps/relay') })
    const pack = await run('npm', ['pack', '--json', ...packages.flatMap((p) => ['-w', p]), '--pack-destination', tarballs], { cwd: repo, maxBuffer: 64 << 20 })
    packed.push(...(JSON.parse(pack.stdout) as Packed[]))

    for (const [path, text] of Object.entries(appFiles)) {
      mkdirSync(join(app, path, '..'), { recursive: true })
      writeFileSync(join(app, path), text)
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'engram-adoption-app', private: true, type: 'module' }))
    // One install of every tarball, so @engram/* resolve to them; the rest comes from the registry. `ai` 6
    // (the adapter's peer range allows 6 and 7; 7 wants Node >= 22). Scripts off: the only install script
    // is better-sqlite3's native build (minutes from source here), copied below from the repository's
    // install of the same version.
    const install = await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        ...packed.map((p) => join(tarballs, p.filename)),
        'yjs@^13.6.0',
        'react@^19',
        'react-dom@^19',
        'ai@^6',
        'zod@^4',
        `vite@${repoPackage('vite').version}`,
        `typescript@${repoPackage('typescript').version}`,
        '@types/react@^19',
        '@types/react-dom@^19',
      ],
      { cwd: app, maxBuffer: 64 << 20 },
    )
    installLog = install.stdout + install.stderr
    const sqlite = 'node_modules/better-sqlite3'
    expect(JSON.parse(readFileSync(join(app, sqlite, 'package.json'), 'utf8')).version).toBe(repoPackage('better-sqlite3').version)
    cpSync(join(repo, sqlite, 'build'), join(app, sqlite, 'build'), { recursive: true })

    await run(join(app, 'node_modules/.bin/vite'), ['build', '--logLevel', 'warn'], { cwd: app })
    server = await serveStatic(join(app, 'dist'))
    relay = await startRelay(app, join(dir, 'relay-data'), secret)
  }, 180_000)

  afterAll(async () => {
    await Promise.allSettled(profiles.map((p) => p.close()))
    await Promise.allSettled([server?.close(), relay?.stop()])
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('packs every package with what its package.json points at and no tests', () => {
    expect(packed.map((p) => p.name).sort()).toEqual([
      '@engram/ai-sdk',
      '@engram/core',
      '@engram/langgraph',
      '@engram/react',
      '@engram/relay',
      '@engram/sync',
      '@engram/worker',
    ])
    const manifests = new Map(packages.map((p) => [JSON.parse(readFileSync(join(repo, p, 'package.json'), 'utf8')).name as string, p]))
    const missing = packed.flatMap((p) => missingFiles(p, JSON.parse(readFileSync(join(repo, manifests.get(p.name)!, 'package.json'), 'utf8')) as Manifest))
    expect(missing).toEqual([])
    expect(packed.flatMap((p) => p.files.filter((f) => /\.test\.|(^|\/)(test|fixtures)\//.test(f.path)).map((f) => `${p.name}: ${f.path}`))).toEqual([])
    // Shipped modules are built from the shipped sources (no stale output of a moved file).
    const stale = packed.flatMap((p) => {
      const paths = new Set(p.files.map((f) => f.path))
      if (![...paths].some((f) => f.startsWith('src/'))) return []
      return [...paths].filter(
        (f) =>
          /^dist\/.*\.js$/.test(f) &&
          !paths.has(f.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')) &&
          !paths.has(f.replace(/^dist\//, 'src/').replace(/\.js$/, '.tsx')),
      )
    })
    expect(stale).toEqual([])
  })

  it('installs from the tarballs without an engine warning, every @engram/* package from its tarball', () => {
    expect(installLog).not.toMatch(/EBADENGINE/)
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> }
    const engram = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/@engram/'))
    expect(engram.map(([path]) => path).sort()).toEqual(packed.map((p) => `node_modules/${p.name}`).sort())
    for (const [path, entry] of engram) expect(entry.resolved, path).toMatch(/^file:/)
  })

  it('type-checks the app against the packed declarations without skipLibCheck', async () => {
    const tsc = await run(join(app, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: app }).catch((error: { stdout?: string }) => ({
      stdout: error.stdout ?? String(error),
    }))
    expect(tsc.stdout).toBe('')
  })

  it('built with Vite: the worker is an ES module that loads its parts on demand', () => {
    const assets = readdirSync(join(app, 'dist/assets'))
    const worker = assets.find((name) => /^memory\.worker-.*\.js$/.test(name))
    expect(worker).toBeDefined()
    // `worker: { format: 'es' }`: the host imports its chunks instead of inlining them all into one script.
    expect(readFileSync(join(app, 'dist/assets', worker!), 'utf8')).toMatch(/\bimport\(|\bfrom\s*["']/)
    expect(assets.filter((name) => name.endsWith('.js')).length).toBeGreaterThan(10)
  })

  it('writes, searches and builds context in Chromium, with React hooks, and syncs to a second profile through the packed relay', async () => {
    const { stdout: token } = await run('npx', ['engram-relay', 'token', '--user', 'u1'], { cwd: app, env: { ...process.env, ENGRAM_RELAY_SECRET: secret } })
    expect(token.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
    const url = `${server!.origin}/?user=u1&relay=${encodeURIComponent(relay!.url)}&token=${encodeURIComponent(token.trim())}`
    const open = async (name: string): Promise<{ page: Page; problems: string[] }> => {
      const profile = await launchProfile(`adoption-${name}`)
      profiles.push(profile)
      const page = profile.context.pages()[0] ?? (await profile.context.newPage())
      const problems: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      page.on('pageerror', (error) => problems.push(error.message))
      await page.goto(url)
      await page.waitForFunction(() => document.body.dataset.ready === 'true', undefined, { timeout: 30_000 })
      return { page, problems }
    }

    const a = await open('A')
    const result = await a.page.evaluate(async () => {
      const { memory } = window as unknown as { memory: import('@engram/worker').RemoteMemory }
      await memory.facts.set('user', 'favourite_colour', 'teal')
      const session = await memory.sessions.create('user', { title: 'chat' })
      await memory.messages.appendExchange(session.id, 'My favourite colour is teal.', 'Noted: your favourite colour is teal.')
      const hits = await memory.search('user', 'teal')
      const context = await memory.context.build('user', { sessionId: session.id, query: 'colour', budget: 500 })
      await memory.sync.whenSynced('user')
      return { kinds: [...new Set(hits.map((h) => h.kind))].sort(), context: context.text, tokens: context.tokens }
    })
    expect(result.kinds).toEqual(['fact', 'message'])
    expect(result.context).toContain('teal')
    expect(result.tokens).toBeLessThanOrEqual(500)
    // The React hooks render the store and its sync status.
    await a.page.locator('#facts li', { hasText: 'favourite_colour="teal"' }).waitFor({ timeout: 10_000 })
    await a.page.locator('#sync', { hasText: 'synced' }).waitFor({ timeout: 10_000 })

    // Another profile of the same user: the fact arrives through the relay.
    const b = await open('B')
    await b.page.locator('#facts li', { hasText: 'favourite_colour="teal"' }).waitFor({ timeout: 20_000 })
    expect(await b.page.locator('#sync').textContent()).toBe('synced')
    expect([...a.problems, ...b.problems]).toEqual([])
  })
})
