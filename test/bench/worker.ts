/**
 * `npm run bench -- worker`: the cost of the worker boundary, measured in real
 * Chromium (the e2e harness): `facts.get` through Comlink beside a raw
 * postMessage round trip plus the same Dexie get inside the worker, and
 * `messages.appendExchange` through the worker beside the same call in the page.
 */
import type { BenchSamples } from '../e2e/pages/bench-page.js'
import { buildTestPages } from '../e2e/support/build-pages.js'
import { launchProfile } from '../e2e/support/chromium.js'
import { serveStatic } from '../e2e/support/static-server.js'
import { median, percentile, printRows, printTable } from './stats.js'

const CALLS = 5_000
const APPENDS = 500

/** Runs the worker benchmarks in Chromium and prints their tables. */
export async function runWorkerBench(): Promise<void> {
  const root = await buildTestPages()
  const server = await serveStatic(root, { isolated: true })
  const profile = await launchProfile('bench')
  try {
    const page = await profile.context.newPage()
    await page.goto(`${server.origin}/bench.html`)
    await page.waitForFunction(() => document.title === 'ready')
    const s = await page.evaluate(
      ([calls, appends]) => (window as unknown as { bench: { run(c: number, a: number): Promise<BenchSamples> } }).bench.run(calls!, appends!),
      [CALLS, APPENDS],
    )
    if (!s.crossOriginIsolated) console.log('\n> warning: page not cross-origin isolated; timer resolution is coarse')
    const rawMedian = median(s.echo) + median(s.dexieGet)
    const rawP99 = percentile(s.echo, 99) + percentile(s.dexieGet, 99)
    printTable(`worker: facts.get round trip (${CALLS} calls, Chromium ${(await profile.context.browser()?.version()) ?? ''})`, [
      {
        name: 'facts.get via worker, median',
        ours: median(s.factsGet),
        baseline: rawMedian,
        unit: 'ms',
        baselineName: 'raw postMessage RT + Dexie get in worker',
        goal: '≤ 1.3×',
      },
      {
        name: 'facts.get via worker, p99',
        ours: percentile(s.factsGet, 99),
        baseline: rawP99,
        unit: 'ms',
        baselineName: 'raw postMessage RT + Dexie get in worker (p99 sum)',
      },
    ])
    printTable(`worker: messages.appendExchange (${APPENDS} calls)`, [
      {
        name: 'appendExchange via worker, median',
        ours: median(s.appendWorker),
        baseline: median(s.appendPage),
        unit: 'ms',
        baselineName: 'same call, Engram on Dexie in the page',
        goal: '≤ 1.3×',
      },
      {
        name: 'appendExchange via worker, p99',
        ours: percentile(s.appendWorker, 99),
        baseline: percentile(s.appendPage, 99),
        unit: 'ms',
        baselineName: 'same call in the page (p99)',
      },
    ])
    printRows(
      'worker: components (median / p99, ms)',
      ['path', 'median', 'p99'],
      [
        ['raw postMessage round trip', median(s.echo), percentile(s.echo, 99)],
        ['Dexie facts.get inside the worker', median(s.dexieGet), percentile(s.dexieGet, 99)],
        ['Dexie facts.get in an explicit read transaction, in the worker', median(s.dexieTxGet), percentile(s.dexieTxGet, 99)],
        ['Engram facts.get in the worker (no boundary)', median(s.engramGetInWorker), percentile(s.engramGetInWorker, 99)],
        ['raw postMessage whose handler does the Dexie get (no Comlink, no SDK)', median(s.rawGetEcho), percentile(s.rawGetEcho, 99)],
        ['host no-op through Comlink + SDK (sync.isLeader)', median(s.hostNoop), percentile(s.hostNoop, 99)],
        ['facts.get via worker', median(s.factsGet), percentile(s.factsGet, 99)],
      ],
    )
  } finally {
    await profile.close()
    await server.close()
  }
}
