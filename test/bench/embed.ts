/**
 * `npm run bench -- embed`: the shipped embedder (@engram/embed-local) in real
 * Chromium, inside a dedicated worker as apps run the SDK, the model and the
 * WASM binaries served from the page's own assets (copied there as an app's
 * bundler would): first load, throughput, a background backfill against
 * `facts.set` p95, hybrid beside text search at 20,000 messages, and storage
 * per message with vectors, text only and raw rows, each in a fresh origin.
 * EMBED_BENCH_SMOKE=1 runs it small.
 */
import type { EmbedBenchCommand } from '../e2e/pages/bench-embed.worker.js'
import { buildTestPages } from '../e2e/support/build-pages.js'
import { copyEmbedderAssets } from '../e2e/support/embedder-assets.js'
import { launchProfile } from '../e2e/support/chromium.js'
import { serveStatic } from '../e2e/support/static-server.js'
import { fmt, printRows } from './stats.js'

const smoke = process.env.EMBED_BENCH_SMOKE === '1'
/** EMBED_BENCH_SUITES=load,backfill,search,storage runs a part (default: all). */
const parts = new Set((process.env.EMBED_BENCH_SUITES ?? 'load,backfill,search,storage').split(','))
/** EMBED_BENCH_BACKFILL=worker runs only the model-in-its-own-worker variant of the backfill. */
const backfillVariants = process.env.EMBED_BENCH_BACKFILL === 'worker' ? [true] : [false, true]
const sizes = smoke
  ? { throughput: 128, backfill: 500, sets: 50, watchMs: 20_000, search: 2_000, queries: 40, storage: 300 }
  : { throughput: 512, backfill: 10_000, sets: 200, watchMs: 120_000, search: 20_000, queries: 200, storage: 1_000 }
/** The built test pages plus the model and the WASM files, where an app's bundler would put them. */
async function assetsRoot(): Promise<string> {
  const root = await buildTestPages()
  await copyEmbedderAssets(root)
  return root
}

/** Runs one command in a fresh origin of a fresh profile (an empty HTTP cache and IndexedDB). */
async function inFreshOrigin<T>(root: string, command: EmbedBenchCommand): Promise<T> {
  const profile = await launchProfile('embed-bench')
  const server = await serveStatic(root, { isolated: true })
  try {
    const page = await profile.context.newPage()
    page.on('console', (m) => console.log(`[page] ${m.text()}`))
    await page.goto(`${server.origin}/bench-embed.html`)
    await page.waitForFunction(() => document.title === 'ready')
    return (await page.evaluate((c) => (window as unknown as { bench: { ask: (c: unknown) => Promise<unknown> } }).bench.ask(c), command)) as T
  } finally {
    await server.close()
    await profile.close()
  }
}

/** Runs the embedder's browser benchmarks and prints their tables. */
export async function runEmbedBench(): Promise<void> {
  const root = await assetsRoot()
  if (parts.has('load')) await loadFigures(root)
  if (parts.has('backfill')) await backfillFigures(root)
  if (parts.has('search')) await searchFigures(root)
  if (parts.has('storage')) await storageFigures(root)
}

async function loadFigures(root: string): Promise<void> {
  const load = await inFreshOrigin<{ backend: string; ms: number; bytes: number; crossOriginIsolated: boolean }>(root, { cmd: 'load' })
  const speed = await inFreshOrigin<{ perSecond: number; queryMedianMs: number; queryP95Ms: number }>(root, { cmd: 'throughput', n: sizes.throughput })
  printRows(
    'The shipped embedder in a Chromium worker (USE lite, TensorFlow.js WASM)',
    ['measurement', 'figure'],
    [
      ['first load (fresh profile: model files fetched, graph built, one warm-up run)', `${fmt(load.ms)} ms`],
      ['bytes fetched', `${(load.bytes / 1e6).toFixed(1)} MB`],
      ['backend', `${load.backend}${load.crossOriginIsolated ? ' (cross-origin isolated)' : ''}`],
      [`throughput, ${sizes.throughput} corpus turns in batches of 32`, `${fmt(speed.perSecond)} sentences/s`],
      ['one query embedded, median / p95', `${fmt(speed.queryMedianMs)} / ${fmt(speed.queryP95Ms)} ms`],
    ],
  )
}

async function backfillFigures(root: string): Promise<void> {
  type Backfill = { idleP95: number; idleMedian: number; busyP95: number; busyMedian: number; watchedMs: number; embedded: number; embeddedWhileTimed: number }
  const rows: string[][] = []
  for (const modelWorker of backfillVariants) {
    const b = await inFreshOrigin<Backfill>(root, { cmd: 'backfill', n: sizes.backfill, sets: sizes.sets, modelWorker, watchMs: sizes.watchMs })
    const where = modelWorker ? 'model in its own worker (workerEmbedder, 1 WASM thread)' : "model in the store's worker"
    rows.push(
      [`facts.set p95, ${where}`, `${fmt(b.busyP95)} ms`, `${fmt(b.idleP95)} ms`, `${(b.busyP95 / b.idleP95).toFixed(2)}×`, '≤ 2×'],
      [`facts.set median, ${where}`, `${fmt(b.busyMedian)} ms`, `${fmt(b.idleMedian)} ms`, `${(b.busyMedian / b.idleMedian).toFixed(2)}×`, ''],
      [
        `backfill rate, ${where}`,
        `${fmt((b.embedded / b.watchedMs) * 1000)} messages/s (${b.embedded.toLocaleString('en')} in ${fmt(b.watchedMs / 1000)} s; ${b.embeddedWhileTimed} while facts.set was timed)`,
        '',
        '',
        '',
      ],
    )
  }
  printRows(
    `Backfill of ${sizes.backfill.toLocaleString('en')} messages (a store opened with the embedder for the first time) beside facts.set (${sizes.sets} calls)`,
    ['measurement', 'during the backfill', 'idle (same store, before)', 'ratio', 'goal'],
    rows,
  )
}

async function searchFigures(root: string): Promise<void> {
  const search = await inFreshOrigin<{ textMedian: number; hybridMedian: number; textP95: number; hybridP95: number }>(root, {
    cmd: 'search',
    n: sizes.search,
    queries: sizes.queries,
  })
  printRows(
    `Search at ${sizes.search.toLocaleString('en')} messages, the query embedded by the model (stored vectors: a stand-in with the model's id and dimensions)`,
    ['measurement', 'hybrid', 'text only', 'ratio', 'goal'],
    [
      ['median', `${fmt(search.hybridMedian)} ms`, `${fmt(search.textMedian)} ms`, `${(search.hybridMedian / search.textMedian).toFixed(2)}×`, '≤ 10 ms'],
      ['p95', `${fmt(search.hybridP95)} ms`, `${fmt(search.textP95)} ms`, `${(search.hybridP95 / search.textP95).toFixed(2)}×`, ''],
    ],
  )
}

async function storageFigures(root: string): Promise<void> {
  const kb: Record<string, number> = {}
  for (const variant of ['raw', 'text', 'vectors'] as const)
    kb[variant] = (await inFreshOrigin<number>(root, { cmd: 'storage', variant, n: sizes.storage })) / sizes.storage / 1024
  printRows(
    `Storage per message, ${sizes.storage.toLocaleString('en')} messages, each in a fresh origin (navigator.storage.estimate)`,
    ['variant', 'kB per message', 'vs raw rows'],
    [
      ['raw Dexie rows', fmt(kb.raw!), '1.00×'],
      ['Engram, text only', fmt(kb.text!), `${(kb.text! / kb.raw!).toFixed(2)}×`],
      ['Engram with int8 vectors (512 dimensions)', fmt(kb.vectors!), `${(kb.vectors! / kb.raw!).toFixed(2)}×`],
    ],
  )
}
