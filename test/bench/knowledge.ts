/**
 * `npm run bench -- knowledge`: entities and relations in real Chromium (a fresh profile, real
 * IndexedDB, a dedicated worker as apps run the SDK): `relations.current`, `asOf` and
 * `around(depth 2)` at 10,000 entities and 100,000 relations beside raw Dexie reading the same
 * rows of the same database, and `context.build` with the knowledge section on 100,000 messages
 * beside the same build without it, in the same run. KNOWLEDGE_BENCH_SMOKE=1 runs it small.
 */
import type { KnowledgeBenchConfig, KnowledgeFigure } from '../e2e/pages/bench-knowledge.worker.js'
import { buildTestPages } from '../e2e/support/build-pages.js'
import { launchProfile } from '../e2e/support/chromium.js'
import { serveStatic } from '../e2e/support/static-server.js'
import { printTable } from './stats.js'

const smoke = process.env.KNOWLEDGE_BENCH_SMOKE === '1'
const config: KnowledgeBenchConfig = smoke
  ? { entities: 1_000, relations: 10_000, messages: 5_000, calls: 40 }
  : { entities: 10_000, relations: 100_000, messages: 100_000, calls: 200 }

/** Runs the knowledge suite and prints its table. */
export async function runKnowledgeBench(): Promise<void> {
  const root = await buildTestPages()
  const server = await serveStatic(root, { isolated: true })
  const profile = await launchProfile('bench-knowledge')
  try {
    const page = await profile.context.newPage()
    page.on('console', (m) => {
      if (m.text().startsWith('[bench]')) console.error(m.text())
    })
    await page.goto(`${server.origin}/bench-knowledge.html`)
    await page.waitForFunction(() => document.title === 'ready')
    const version = (await profile.context.browser()?.version()) ?? 'Chromium'
    const result = await page.evaluate(
      (c) => (window as unknown as { bench: { run(c: KnowledgeBenchConfig): Promise<{ figures: KnowledgeFigure[]; notes: string[] }> } }).bench.run(c),
      config,
    )
    printTable(`knowledge in Chromium ${version} (dedicated worker)`, result.figures)
    for (const note of result.notes) console.log(`\n> ${note}`)
  } finally {
    await profile.close()
    await server.close()
  }
}
