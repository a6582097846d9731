import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/*
 * The dependency direction of DESIGN.md §2: core ← sync ← worker ← apps.
 * core imports no Yjs and no Comlink; nothing imports from an app; index.ts only re-exports.
 * The adapters (langgraph, ai-sdk, react) depend on core (and type-only on worker), never on
 * each other, on sync, on Yjs or on Comlink: they take a memory or a worker client.
 */
const root = join(import.meta.dirname, '..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : []
  })
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!)
}

const rules: { pkg: string; forbidden: RegExp }[] = [
  { pkg: 'packages/core/src', forbidden: /^(yjs|y-[\w-]+|comlink|@engram\/(sync|worker|relay|demo))(\/|$)/ },
  { pkg: 'packages/sync/src', forbidden: /^(comlink|@engram\/(worker|relay|demo))(\/|$)/ },
  { pkg: 'packages/worker/src', forbidden: /^@engram\/(relay|demo)(\/|$)/ },
  { pkg: 'packages/langgraph/src', forbidden: adapterForbidden('langgraph') },
  { pkg: 'packages/ai-sdk/src', forbidden: adapterForbidden('ai-sdk') },
  { pkg: 'packages/react/src', forbidden: adapterForbidden('react') },
]

/** An adapter may import @engram/core only (and its own framework); @engram/worker only as types. */
function adapterForbidden(self: string): RegExp {
  const others = ['langgraph', 'ai-sdk', 'react', 'sync', 'relay', 'demo'].filter((name) => name !== self).join('|')
  return new RegExp(`^(yjs|y-[\\w-]+|comlink|@engram\\/(${others}))(\\/|$)`)
}

const ADAPTERS = ['langgraph', 'ai-sdk', 'react']

describe('architecture', () => {
  for (const { pkg, forbidden } of rules) {
    it(`${pkg} respects the dependency direction`, () => {
      const offending = sources(join(root, pkg)).flatMap((file) =>
        importsOf(file)
          .filter((spec) => forbidden.test(spec) || spec.includes('/apps/'))
          .map((spec) => `${relative(root, file)} → ${spec}`),
      )
      expect(offending).toEqual([])
    })
  }

  it('adapters import @engram/worker for types only', () => {
    const offending = ADAPTERS.flatMap((name) =>
      sources(join(root, 'packages', name, 'src')).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"](@engram\/worker[^'"]*)['"]/g)]
          .filter((m) => m[2] === undefined)
          .map((m) => `${relative(root, file)} → ${m[3]}`),
      ),
    )
    expect(offending).toEqual([])
  })

  it('packages never reach into another package by relative path', () => {
    const offending = ['core', 'sync', 'worker', ...ADAPTERS].flatMap((name) =>
      sources(join(root, 'packages', name, 'src')).flatMap((file) =>
        importsOf(file)
          .filter((spec) => spec.startsWith('.') && !join(file, '..', spec).startsWith(join(root, 'packages', name)))
          .map((spec) => `${relative(root, file)} → ${spec}`),
      ),
    )
    expect(offending).toEqual([])
  })

  it('index.ts files only re-export', () => {
    for (const dir of ['packages/core/src', 'packages/sync/src', 'packages/worker/src', ...ADAPTERS.map((name) => `packages/${name}/src`)]) {
      const text = readFileSync(join(root, dir, 'index.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      const rest = text.replace(/export\s+(type\s+)?(\*(\s+as\s+\w+)?|\{[^}]*\})\s+from\s+'[^']+'/g, '').trim()
      expect(rest, `${dir}/index.ts holds more than re-exports`).toBe('')
    }
  })
})
