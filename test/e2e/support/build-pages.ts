import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import { engramAliases } from '../../../vitest.config.js'

/** The repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
/** The test pages' sources. */
export const pagesRoot = join(repoRoot, 'test/e2e/pages')

const SOURCE_DIRS = [
  'packages/core/src',
  'packages/sync/src',
  'packages/worker/src',
  'packages/langgraph/src',
  'packages/ai-sdk/src',
  'packages/embed-local/src',
  'test/support',
  'test/e2e/pages',
]

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256')
  for (const dir of SOURCE_DIRS) {
    const abs = join(repoRoot, dir)
    if (!existsSync(abs)) continue
    const files = (await readdir(abs, { recursive: true })).filter((f) => /\.(ts|html)$/.test(f) && !f.endsWith('.test.ts')).sort()
    for (const file of files) hash.update(`${dir}/${file}\0`).update(await readFile(join(abs, file)))
  }
  return hash.digest('hex').slice(0, 16)
}

/**
 * Builds the test pages (`test/e2e/pages/*.html`, their workers included) with
 * Vite, once per change of the sources: the output is cached in a temp dir
 * named after a hash of every source file, so later test files and runs reuse it.
 * @returns the directory to serve.
 */
export async function buildTestPages(): Promise<string> {
  const out = join(tmpdir(), 'engram-e2e-pages', await sourceHash())
  if (existsSync(join(out, '.complete'))) return out
  const staging = `${out}.tmp-${process.pid}`
  const pages = (await readdir(pagesRoot)).filter((f) => f.endsWith('.html'))
  await build({
    root: pagesRoot,
    configFile: false,
    logLevel: 'warn',
    resolve: { alias: engramAliases },
    worker: { format: 'es' },
    build: {
      outDir: staging,
      emptyOutDir: true,
      target: 'es2022',
      minify: false,
      sourcemap: false,
      rollupOptions: { input: Object.fromEntries(pages.map((p) => [p.replace(/\.html$/, ''), join(pagesRoot, p)])) },
    },
  })
  await import('node:fs/promises').then((fs) => fs.writeFile(join(staging, '.complete'), new Date().toISOString()))
  await mkdir(dirname(out), { recursive: true })
  await rm(out, { recursive: true, force: true })
  await rename(staging, out)
  return out
}
