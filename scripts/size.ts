/**
 * `npm run size`: each package's minified + gzipped size, for its README.
 * Own code only (dependencies external), and the full bundle with dependencies
 * as an app would ship it: all of it, and the part loaded at start (code behind
 * a dynamic `import()` loads on first use).
 *
 * `npm run size -- --files [filter]` also lists, for each bundle whose name
 * contains `filter`, its chunks (min+gz, loaded at start or on use) and the
 * source files in each, largest first, to find what to shrink.
 * `npm run size -- --bytes` prints every size in bytes instead of kB.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { type BundleSize, bundleSize } from './bundle-size.js'

/** What an app imports: each entry is measured as that import alone, so tree-shaking applies. */
const packages = [
  { name: '@engram/core (openMemory, every module)', own: 'core', code: "export { openMemory, MemoryError } from '@engram/core'" },
  {
    name: '@engram/core (createMemory: facts + conversations + search + context)',
    own: 'core',
    code: "export { createMemory, factsModule, conversationsModule, searchModule, contextModule, MemoryError } from '@engram/core'",
  },
  { name: '@engram/core (createMemory: facts only)', own: 'core', code: "export { createMemory, factsModule, MemoryError } from '@engram/core'" },
  { name: '@engram/sync', own: 'sync', code: "export { startSync } from '@engram/sync'" },
  { name: '@engram/worker (UI client)', own: 'worker', code: "export { connectMemory } from '@engram/worker'" },
  { name: '@engram/worker/host', own: 'worker', code: "import '@engram/worker/host'" },
  { name: '@engram/langgraph (EngramSaver + EngramStore)', own: 'langgraph', code: "export { EngramSaver, EngramStore } from '@engram/langgraph'" },
  { name: '@engram/ai-sdk (memoryTools + engramMiddleware)', own: 'ai-sdk', code: "export { memoryTools, engramMiddleware } from '@engram/ai-sdk'" },
  { name: '@engram/react (provider + every hook)', own: 'react', code: "export * from '@engram/react'" },
]
const root = join(import.meta.dirname, '..')
const entryDir = join(root, 'node_modules', '.cache', 'engram-size')
mkdirSync(entryDir, { recursive: true })

/** `--bytes` prints exact byte counts (to compare two builds, or check a budget such as the UI client's 4,608 bytes). */
const inBytes = process.argv.includes('--bytes')
const kb = (n: number) => (inBytes ? `${n.toLocaleString('en')} B` : `${(n / 1024).toFixed(1)} kB`)

/** Each chunk's min and min+gz, and its source files by rendered size (before minifying). */
function printFiles(name: string, { chunks, initial }: BundleSize): void {
  console.log(`\n${name}`)
  for (const c of [...chunks].sort((a, b) => b.code.length - a.code.length)) {
    const when = initial.has(c) ? 'at start' : 'on use'
    console.log(`  ${c.isEntry ? 'entry' : c.fileName}: ${kb(c.code.length)} min, ${kb(gzipSync(c.code).length)} min+gz, ${when}`)
    const files = Object.entries(c.modules).sort(([, a], [, b]) => b.renderedLength - a.renderedLength)
    for (const [id, m] of files) if (m.renderedLength > 0) console.log(`    ${String(m.renderedLength).padStart(7)}  ${relative(root, id)}`)
  }
}

const filesAt = process.argv.indexOf('--files')
const filesFilter = filesAt < 0 ? undefined : (process.argv[filesAt + 1] ?? '')
const details: Array<() => void> = []
console.log('| package | own code min | own code min+gz | with dependencies min+gz | of which loaded at start |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const [i, { name, own: pkg, code }] of packages.entries()) {
  const entry = join(entryDir, `entry-${i}.ts`)
  writeFileSync(entry, `${code}\n`)
  const own = await bundleSize(entry, pkg)
  const all = await bundleSize(entry, undefined)
  console.log(`| ${name} | ${kb(own.min)} | ${kb(own.gzip)} | ${kb(all.gzip)} | ${kb(all.initialGzip)} |`)
  if (filesFilter !== undefined && name.includes(filesFilter)) details.push(() => printFiles(name, all))
}
for (const print of details) print()
