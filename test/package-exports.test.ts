import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/*
 * After `npm run build`, a plain Node script imports the packages by name from
 * their built `dist/` through the `exports` maps (no TypeScript, no aliases).
 * `npm test` builds first.
 */
const root = join(import.meta.dirname, '..')

const packages = ['core', 'sync', 'worker', 'langgraph', 'ai-sdk', 'react', 'embed-local']

function runNode(code: string, type: 'module' | 'commonjs' = 'module'): string {
  return execFileSync(process.execPath, [`--input-type=${type}`, '-e', code], { cwd: root, encoding: 'utf8', timeout: 30_000 })
}

interface PackageJson {
  name: string
  license?: string
  engines?: { node?: string }
  files?: string[]
  exports: Record<string, Record<string, string>>
}

function readPackage(pkg: string): PackageJson {
  return JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as PackageJson
}

describe('package exports (built dist)', () => {
  it('dist exists for every package (run `npm run build` first)', () => {
    for (const pkg of packages) {
      expect(existsSync(join(root, 'packages', pkg, 'dist', 'index.js')), `packages/${pkg}/dist/index.js`).toBe(true)
      expect(existsSync(join(root, 'packages', pkg, 'dist', 'index.d.ts')), `packages/${pkg}/dist/index.d.ts`).toBe(true)
    }
  })

  it('a plain Node script opens memory from @engram/core', () => {
    const out = runNode(`
      import { openMemory, MemoryError } from '@engram/core'
      import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
      const memory = await openMemory({ appId: 'exports', userId: 'u1', indexedDB: new IDBFactory(), IDBKeyRange })
      const projects = await memory.projects.list()
      let code
      try { await memory.projects.update('missing', { name: 'x' }) } catch (e) { code = e instanceof MemoryError && e.code }
      await memory.close()
      console.log(JSON.stringify({ projects: projects.map((p) => p.id), code }))
    `)
    expect(JSON.parse(out.trim())).toEqual({ projects: ['user'], code: 'not_found' })
  })

  it('@engram/core/pricing gives the default price table apps pass as pricing, and createMemory composes modules', () => {
    const out = runNode(`
      import { createMemory, factsModule } from '@engram/core'
      import { defaultPricing } from '@engram/core/pricing'
      import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
      const memory = await createMemory({ appId: 'exports', userId: 'u2', indexedDB: new IDBFactory(), IDBKeyRange, modules: [factsModule()] })
      await memory.facts.set('user', 'k', 1)
      const listed = await memory.facts.list('user')
      await memory.close()
      console.log(JSON.stringify({ priced: typeof defaultPricing['gpt-4o*']?.input, keys: listed.items.map((f) => f.key), search: 'search' in memory }))
    `)
    expect(JSON.parse(out.trim())).toEqual({ priced: 'number', keys: ['k'], search: false })
  })

  it('@engram/core/internal holds the seams between Engram packages, and the main entry does not', () => {
    const out = runNode(`
      const core = await import('@engram/core')
      const internal = await import('@engram/core/internal')
      const seams = ['replicationOf', 'atRestCipherOf', 'verifyAtRestKey', 'mapError']
      console.log(JSON.stringify({ internal: seams.map((n) => typeof internal[n]), main: seams.filter((n) => n in core) }))
    `)
    expect(JSON.parse(out.trim())).toEqual({ internal: ['function', 'function', 'function', 'function'], main: [] })
  })

  it('@engram/sync and @engram/worker load by name', () => {
    const out = runNode(`
      const sync = await import('@engram/sync')
      const worker = await import('@engram/worker')
      console.log(JSON.stringify([typeof sync.startSync, typeof worker.connectMemory, typeof worker.exposeMemory]))
    `)
    expect(JSON.parse(out.trim())).toEqual(['function', 'function', 'function'])
  })

  it('the adapters load by name next to their frameworks', () => {
    const out = runNode(`
      const langgraph = await import('@engram/langgraph')
      const aiSdk = await import('@engram/ai-sdk')
      const react = await import('@engram/react')
      console.log(JSON.stringify([typeof langgraph.EngramSaver, typeof langgraph.EngramStore, typeof aiSdk.memoryTools, typeof aiSdk.engramMiddleware, typeof react.MemoryProvider, typeof react.useSearch]))
    `)
    expect(JSON.parse(out.trim())).toEqual(['function', 'function', 'function', 'function', 'function', 'function'])
  })

  it('@engram/embed-local loads by name and embeds from the weights package, offline', () => {
    const out = runNode(`
      import { localEmbedder } from '@engram/embed-local'
      const embedder = localEmbedder()
      const [v] = await embedder.embed(['hello from a plain Node script'])
      console.log(JSON.stringify([embedder.model, embedder.dimensions, v.length]))
    `)
    expect(JSON.parse(out.trim())).toEqual(['universal-sentence-encoder-lite-en/energetic-ai-0.2.0', 512, 512])
  })

  it('every package is MIT with its LICENSE, says which Node it needs, and ships no tests', () => {
    for (const pkg of packages) {
      const json = readPackage(pkg)
      expect(json.license, json.name).toBe('MIT')
      expect(readFileSync(join(root, 'packages', pkg, 'LICENSE'), 'utf8'), json.name).toContain('Copyright (c) 2026 Engram contributors')
      expect(json.engines?.node, json.name).toBe('>=20.19')
      expect(json.files, json.name).toEqual(expect.arrayContaining(['dist', '!dist/**/*.test.*', '!src/**/*.test.ts', 'README.md', 'LICENSE']))
      for (const [path, conditions] of Object.entries(json.exports)) {
        // `source` first (the repository runs with --conditions=source); `default` last, so `require` resolves too.
        expect(Object.keys(conditions), `${json.name} ${path}`).toEqual(['source', 'types', 'import', 'default'])
        expect(conditions.default, `${json.name} ${path}`).toBe(conditions.import)
      }
    }
  })

  it('every entry point loads with require() on Node >= 20.19 (ES modules, no top-level await)', () => {
    const entries = packages
      .flatMap((pkg) => {
        const json = readPackage(pkg)
        return Object.keys(json.exports).map((path) => json.name + path.slice(1))
      })
      .filter((name) => name !== '@engram/worker/host') // a worker script: it exposes the memory as it loads
    const out = runNode(`console.log(JSON.stringify(${JSON.stringify(entries)}.map((name) => [name, Object.keys(require(name)).length > 0])))`, 'commonjs')
    expect(JSON.parse(out.trim())).toEqual(entries.map((name) => [name, true]))
  })
})
