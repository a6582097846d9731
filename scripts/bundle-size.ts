/**
 * The minified + gzipped size of a bundle as an app ships it (`npm run size`, and the
 * agent-path benchmark's size rows): all its chunks, and the part loaded at start (the entry and
 * what it imports statically; code behind a dynamic `import()` loads on first use).
 */
import { gzipSync } from 'node:zlib'
import { build, type Rolldown } from 'vite'
import { engramAliases } from '../vitest.config.js'

/** A bundle's sizes and chunks. */
export interface BundleSize {
  min: number
  gzip: number
  initialGzip: number
  chunks: Rolldown.OutputChunk[]
  initial: ReadonlySet<Rolldown.OutputChunk>
}

/**
 * Bundles `entry` (minified, ES) and measures it; `own` names the package whose code is
 * measured alone (everything else external), `undefined` bundles every dependency.
 */
export async function bundleSize(entry: string, own: string | undefined): Promise<BundleSize> {
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    resolve: { alias: engramAliases },
    build: {
      write: false,
      minify: true,
      lib: { entry, formats: ['es'], fileName: 'bundle' },
      rolldownOptions: { external: own === undefined ? [] : (id: string) => isExternal(id, entry, own) },
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[]
  const chunks = outputs.flatMap((o) => o.output).filter((c): c is Rolldown.OutputChunk => c.type === 'chunk')
  const code = chunks.map((c) => c.code).join('\n')
  // What loads at start: the entry and what it imports statically (dynamic imports load on first use).
  const byName = new Map(chunks.map((c) => [c.fileName, c]))
  const initial = new Set<Rolldown.OutputChunk>()
  const visit = (c: Rolldown.OutputChunk | undefined): void => {
    if (!c || initial.has(c)) return
    initial.add(c)
    for (const name of c.imports) visit(byName.get(name))
  }
  for (const c of chunks) if (c.isEntry) visit(c)
  return {
    min: code.length,
    gzip: gzipSync(code).length,
    initialGzip: gzipSync([...initial].map((c) => c.code).join('\n')).length,
    chunks,
    initial,
  }
}

/** Own code = the entry and its package's sources; everything else (deps, other @engram packages) is external. */
export function isExternal(id: string, entry: string, own: string): boolean {
  if (id === entry || id.startsWith('.')) return false
  if (id.startsWith('@engram/')) return !id.startsWith(`@engram/${own}`)
  return !id.includes(`/packages/${own}/src/`)
}
