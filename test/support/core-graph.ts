import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/*
 * The import graph of a package's sources, read as text: which file imports which, and whether
 * the edge runs code (a value import, a re-export of values, a lazy `import()`) or only names
 * types (`import type`, `export type`, `import { type A }`). The architecture test holds core's
 * layers and cycles to it; `node --import tsx test/support/core-graph.ts` prints them.
 */

/** One import of one source file. */
export interface Edge {
  from: string
  to: string
  /** Only types cross it: erased when compiled. */
  typeOnly: boolean
}

const IMPORT =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]/g

/** Every non-test `.ts` file below `dir`, as paths relative to it. */
export function sourceFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path, base)
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [relative(base, path)] : []
  })
}

/** The relative imports of every source file below `dir` (paths relative to `dir`, `.ts`). */
export function importGraph(dir: string): Edge[] {
  const edges: Edge[] = []
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(join(dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[4] ?? m[5] ?? m[6])!
      const to = relative(dir, resolve(dir, dirname(file), spec)).replace(/\.js$/, '.ts')
      const names = m[3] ?? ''
      const typeOnly = m[2] !== undefined || (m[4] !== undefined && /^\{[^}]*\}$/.test(names.trim()) && allTypes(names))
      edges.push({ from: file, to, typeOnly })
    }
  }
  return edges
}

function allTypes(braced: string): boolean {
  const parts = braced
    .replace(/[{}]/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return parts.length > 0 && parts.every((p) => p.startsWith('type '))
}

/** Cycles among value edges (strongly connected components of more than one file, or a file importing itself). */
export function valueCycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const e of edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  let counter = 0
  const visit = (v: string) => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || (next.get(v) ?? []).includes(v)) out.push(scc.sort())
    }
  }
  for (const v of next.keys()) if (!index.has(v)) visit(v)
  return out
}

/**
 * Core's layers, lowest first: a file may import (values) from its own layer or a lower one.
 * The kinds share one layer; what composes them sits above.
 */
export const CORE_LAYERS: readonly (readonly string[])[] = [
  ['store'],
  ['search', 'encryption'],
  ['facts', 'blocks', 'sessions', 'messages', 'summaries', 'archive', 'projects', 'spaces', 'people', 'limitations', 'patterns', 'artifacts', 'runtime'],
  ['catalog', 'replication', 'dump'],
  ['context'],
  ['compose'],
  [''],
]

/** The layer of a file of core (by its top folder; the entry files at the root are the top). */
export function layerOf(file: string): number {
  const top = file.includes('/') ? file.slice(0, file.indexOf('/')) : ''
  const layer = CORE_LAYERS.findIndex((names) => names.includes(top))
  return layer === -1 ? CORE_LAYERS.length - 1 : layer
}

/** Value imports that run from a lower layer up to a higher one. */
export function upwardImports(edges: readonly Edge[]): Edge[] {
  return edges.filter((e) => !e.typeOnly && layerOf(e.to) > layerOf(e.from))
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = join(import.meta.dirname, '../../packages/core/src')
  const edges = importGraph(dir)
  const cycles = valueCycles(edges)
  const up = upwardImports(edges)
  console.log(`${sourceFiles(dir).length} files, ${edges.length} imports (${edges.filter((e) => e.typeOnly).length} type-only)`)
  console.log(`value-import cycles: ${cycles.length}`)
  for (const c of cycles) console.log(`  ${c.join(' ↔ ')}`)
  console.log(`upward value imports: ${up.length}`)
  for (const e of up) console.log(`  ${e.from} → ${e.to}`)
}
