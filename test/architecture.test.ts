import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { KINDS } from '../packages/core/src/catalog/kinds.js'
import { KIND_NAMESPACES } from '../packages/core/src/catalog/lists.js'
import { type Edge, importGraph, upwardImports, valueCycles } from './support/core-graph.js'

/*
 * The dependency direction of the design (DESIGN.md §2 of the team's design notes; the repository's own map is docs/where-things-are.md): core ← sync ← worker ← apps.
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
  // The embedder stands alone: it satisfies core's Embedder by shape and imports no Engram package.
  { pkg: 'packages/embed-local/src', forbidden: /^(yjs|y-[\w-]+|comlink|@engram\/[\w-]+)(\/|$)/ },
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

/*
 * Inside core (docs/where-things-are.md): store/ at the bottom imports no kind; a kind's folder
 * imports store/, the kinds its manifest names in `uses` and the search document interface;
 * no value-import cycles; the few imports that run up a layer are known by name.
 */
describe('core layout', () => {
  const coreDir = join(root, 'packages/core/src')
  const edges = importGraph(coreDir)
  const top = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '')
  const show = (e: Edge) => `${e.from} → ${e.to}${e.typeOnly ? ' (type)' : ''}`
  const kindFolders = new Set<string>(KINDS.map((k) => k.name).filter((name) => name !== 'search'))
  /** What a kind writes into the search index: the document it hands the index, and the texts of facts, entities, relations and observations. */
  const SEARCH_DOCUMENT_INTERFACE = new Set([
    'search/index/index-docs.ts',
    'search/index/fact-text.ts',
    'search/index/knowledge-text.ts',
    'search/index/observation-text.ts',
  ])

  it('store/ imports no kind', () => {
    expect(edges.filter((e) => top(e.from) === 'store' && (kindFolders.has(top(e.to)) || top(e.to) === 'search')).map(show)).toEqual([])
  })

  it('a kind imports only store/, the kinds its manifest uses, and the search document interface (types of the public Memory too)', () => {
    const offending = KINDS.filter((k) => k.name !== 'search').flatMap((kind) => {
      const uses = new Set<string>([kind.name, ...((kind as { uses?: readonly string[] }).uses ?? [])])
      return edges
        .filter((e) => top(e.from) === kind.name)
        .filter((e) =>
          e.typeOnly
            ? kindFolders.has(top(e.to)) && !uses.has(top(e.to))
            : !(top(e.to) === 'store' || uses.has(top(e.to)) || SEARCH_DOCUMENT_INTERFACE.has(e.to)),
        )
        .map(show)
    })
    // The people module's `adopt` loads the adoption code (replication/adopt.ts) on first use.
    expect(offending).toEqual(['people/people-module.ts → replication/adopt.ts'])
  })

  it('has no value-import cycles (lazy import() counts; type-only imports do not)', () => {
    expect(valueCycles(edges)).toEqual([])
  })

  it('only three imports run from a lower layer up to a higher one', () => {
    expect(upwardImports(edges).map(show)).toEqual([
      // The at-rest encryption (loaded only in an encrypted store) reads the fields to seal from the catalog,
      // and its move into a fresh database (after enable or rekey) opens that database with the version ladder.
      'encryption/encrypted-tables.ts → catalog/at-rest-fields.ts',
      'encryption/store-encryption.ts → catalog/schema.ts',
      'people/people-module.ts → replication/adopt.ts',
    ])
  })

  it('every table is declared by exactly one manifest, and every manifest is listed once', () => {
    const names = KINDS.map((k) => k.name)
    expect(new Set(names).size).toBe(names.length)
    const tables = KINDS.flatMap((k) => Object.keys(k.tables))
    expect(new Set(tables).size).toBe(tables.length)
  })

  it("the worker client forwards exactly the store's namespaces: the base's, the manifests' and the feature modules'", () => {
    const client = readFileSync(join(root, 'packages/worker/src/client.ts'), 'utf8')
    const listed = (name: string) => [...(client.match(new RegExp(`const ${name} = \\[([^\\]]*)\\]`))?.[1] ?? '').matchAll(/'(\w+)'/g)].map((m) => m[1]!)
    const forwarded = [...listed('NAMESPACES'), ...listed('FUNCTIONS')].sort()
    // The base (compose/create-memory.ts) and the modules that add a namespace without owning a kind.
    const base = ['changes', 'status', 'sync', 'encryption', 'stats', 'export', 'persist']
    const features = ['context', 'import']
    expect(forwarded).toEqual([...new Set([...base, ...features, ...KIND_NAMESPACES])].sort())
  })
})
