/**
 * `npm run bench -- browser`: storage, writes and search measured in real
 * Chromium (a fresh profile, real IndexedDB), inside a dedicated worker as apps
 * run the SDK, beside raw Dexie doing the same work in the same worker and
 * MiniSearch in a worker of its own (its index must not weigh on the store's
 * garbage collection; the two are timed in alternating blocks of queries, not
 * query by query), in the same run. Import runs each in a fresh origin of its own (an origin's
 * databases share one LevelDB), alternating raw and Engram. Sizes: BROWSER_BENCH_IMPORT messages for import and the large
 * search store (default 100,000); BROWSER_BENCH_SMOKE=1 runs everything small;
 * BROWSER_BENCH_SUITES=storage, writes (writes, import and search), import, search or
 * encryption (at-rest encryption on vs off) runs a part; the default runs storage, writes and encryption.
 */
import type { BrowserBenchConfig, BrowserBenchResult, Figure, ImportVariant, StorageVariant } from '../e2e/pages/bench-browser.worker.js'
import type { EncryptionBenchConfig, EncryptionFigure } from '../e2e/pages/bench-encryption.js'
import { buildTestPages } from '../e2e/support/build-pages.js'
import { launchProfile } from '../e2e/support/chromium.js'
import { serveStatic } from '../e2e/support/static-server.js'
import { printTable } from './stats.js'

const smoke = process.env.BROWSER_BENCH_SMOKE === '1'
const importN = Number(process.env.BROWSER_BENCH_IMPORT ?? (smoke ? 5_000 : 100_000))
const suites = (process.env.BROWSER_BENCH_SUITES ?? 'storage,writes,encryption').split(',')
const storageSizes = smoke ? [2_000] : [5_000, 20_000]
const config: BrowserBenchConfig = smoke
  ? { writes: 100, appendMany: 2_000, importN, searchSizes: [2_000, importN], queries: 50, builds: 10 }
  : { writes: 1_000, appendMany: 10_000, importN, searchSizes: [...new Set([5_000, 20_000, importN])], queries: 300, builds: 50 }
type Bench = {
  run(c: BrowserBenchConfig): Promise<BrowserBenchResult>
  storage(v: StorageVariant, n: number): Promise<number>
  importRun(v: ImportVariant, n: number): Promise<number>
  encryption(c: EncryptionBenchConfig): Promise<EncryptionFigure[]>
}
const encryptionConfig: EncryptionBenchConfig = smoke ? { writes: 50, corpus: 2_000, queries: 30 } : { writes: 500, corpus: 20_000, queries: 200 }

type Profile = Awaited<ReturnType<typeof launchProfile>>
/** Import runs per variant, alternating the variants' order round by round (medians are quoted). */
const importRounds = smoke ? 1 : 3

/** Calls `bench[method](...args)` on the bench page in a fresh origin of the profile (a new port: a new origin, its IndexedDB empty). */
async function inFreshOrigin(root: string, profile: Profile, method: 'storage' | 'importRun', args: [string, number]): Promise<number> {
  const server = await serveStatic(root, { isolated: true })
  try {
    const page = await profile.context.newPage()
    await page.goto(`${server.origin}/bench-browser.html`)
    await page.waitForFunction(() => document.title === 'ready')
    const result = await page.evaluate(
      ([m, [variant, n]]) => (window as unknown as { bench: Record<string, (v: string, n: number) => Promise<number>> }).bench[m]!(variant, n),
      [method, args] as const,
    )
    await page.close()
    return result
  } finally {
    await server.close()
  }
}

/** Storage per message of each variant, each written in a fresh origin of the same profile. */
async function storageFigures(root: string, profile: Profile): Promise<Figure[]> {
  const figures: Figure[] = []
  for (const n of storageSizes) {
    const kb: Partial<Record<StorageVariant, number>> = {}
    for (const variant of ['raw', 'engram', 'rows-only', 'unmerged'] as const) {
      const bytes = await inFreshOrigin(root, profile, 'storage', [variant, n])
      kb[variant] = bytes / n / 1024
    }
    const label = n.toLocaleString('en')
    figures.push(
      {
        table: 'storage',
        name: `bytes per message, ${label} messages (index + rows)`,
        ours: kb.engram!,
        baseline: kb.raw!,
        unit: 'kB',
        baselineName: 'the same rows in raw Dexie',
        goal: '≤ 2.5×',
        today: '7.2 kB vs 0.70 kB (10.3×)',
      },
      {
        table: 'storage',
        name: `… Engram rows alone (no index), ${label} messages`,
        ours: kb['rows-only']!,
        baseline: kb.raw!,
        unit: 'kB',
        baselineName: 'the same rows in raw Dexie',
        goal: 'info',
      },
      {
        table: 'storage',
        name: `… Engram with the index never merged, ${label} messages`,
        ours: kb.unmerged!,
        baseline: kb.raw!,
        unit: 'kB',
        baselineName: 'the same rows in raw Dexie',
        goal: 'info',
      },
    )
  }
  return figures
}

/**
 * Import of `importN` messages: each run in a fresh origin (the databases of an origin share one
 * LevelDB, so a run after others would pay for their data), the variants' order alternating round
 * by round; medians of {@link importRounds} runs.
 */
async function importFigures(root: string, profile: Profile): Promise<{ figures: Figure[]; note: string }> {
  const variants: ImportVariant[] = ['raw', 'engram', 'rows-only', 'raw-engram-indexes']
  const runs = new Map<ImportVariant, number[]>(variants.map((v) => [v, []]))
  for (let round = 0; round < importRounds; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      console.error(`[bench] import ${importN}: ${variant}`)
      runs.get(variant)!.push(await inFreshOrigin(root, profile, 'importRun', [variant, importN]))
    }
  }
  const median = (v: ImportVariant) => [...runs.get(v)!].sort((a, b) => a - b)[Math.floor(importRounds / 2)]!
  const label = importN.toLocaleString('en')
  const of = {
    baseline: median('raw'),
    unit: 'ms',
    baselineName: `raw Dexie bulkPut, 1 tx (median of ${importRounds}, each in a fresh origin)`,
    table: 'writes',
  }
  const seconds = (v: ImportVariant) => runs.get(v)!.map((ms) => (ms / 1000).toFixed(1))
  const each = variants.map((v) => `${v} ${seconds(v).join(' / ')} s`).join('; ')
  const figures: Figure[] = [
    { ...of, name: `import ${label} messages, index on`, ours: median('engram'), goal: '≤ 1.3×' },
    { ...of, name: `import ${label} messages, no index (rows only)`, ours: median('rows-only'), goal: '' },
    {
      ...of,
      name: `… raw Dexie bulkPut of the same rows with Engram's message indexes and order key, ${label} messages`,
      ours: median('raw-engram-indexes'),
      goal: 'info',
    },
  ]
  return { figures, note: `import ${label} messages, each run: ${each}` }
}

/** Runs the browser suite and prints its tables. */
export async function runBrowserBench(): Promise<void> {
  const root = await buildTestPages()
  const server = await serveStatic(root, { isolated: true })
  const profile = await launchProfile('bench-browser')
  try {
    const page = await profile.context.newPage()
    page.on('console', (m) => {
      if (m.text().startsWith('[bench]')) console.error(m.text())
    })
    await page.goto(`${server.origin}/bench-browser.html`)
    await page.waitForFunction(() => document.title === 'ready')
    const version = (await profile.context.browser()?.version()) ?? 'Chromium'
    const figures = suites.includes('storage') ? await storageFigures(root, profile) : []
    const imports = suites.includes('writes') || suites.includes('import') ? await importFigures(root, profile) : undefined
    const runs = suites.includes('writes') || suites.includes('search')
    const result: BrowserBenchResult = runs
      ? await page.evaluate((c) => (window as unknown as { bench: Bench }).bench.run(c), { ...config, searchOnly: !suites.includes('writes') })
      : { figures: [], notes: [] }
    result.figures.unshift(...figures, ...(imports?.figures ?? []))
    if (imports) result.notes.unshift(imports.note)
    const tables: Record<string, string> = {
      storage: `storage in Chromium ${version} (navigator.storage.estimate, fresh profile)`,
      writes: 'writes in Chromium (dedicated worker)',
      search: 'search in Chromium (dedicated worker)',
    }
    for (const [key, title] of Object.entries(tables)) {
      const rows = result.figures.filter((f: Figure) => f.table === key)
      if (rows.length === 0) continue
      printTable(
        title,
        rows.map((f) => ({ ...f, goal: [f.goal, f.today ? `today: ${f.today}` : ''].filter(Boolean).join('; ') })),
      )
    }
    for (const note of result.notes) console.log(`\n> ${note}`)
    if (suites.includes('encryption')) {
      const rows = await page.evaluate((c) => (window as unknown as { bench: Bench }).bench.encryption(c), encryptionConfig)
      printTable(
        `at-rest encryption on vs off in Chromium (dedicated worker, ${encryptionConfig.corpus.toLocaleString('en')} messages for search and context)`,
        rows,
      )
    }
  } finally {
    await profile.close()
    await server.close()
  }
}
