/**
 * `npm run bench -- agent-path`: the path agent apps take, in real Chromium, in a dedicated
 * worker, on a fresh profile. Real sentences people wrote (agent-corpus-source.ts), composed into
 * chat turns; each message appended on its own, round-robin over 20 sessions, a fact set one by
 * one after every 10 messages; project sizes of 100 to 100,000 messages. Beside it in the same
 * run: the same records as raw Dexie rows (one transaction per message: the row and its session;
 * per fact: the fact and its version row), each store in an origin of its own (an origin's
 * databases share one LevelDB), written block by block in alternation. The browser is then
 * closed and the same profile reopened: storage is read there, as on a user's disk after a
 * restart, and the searches run on the reopened stores beside MiniSearch (a worker of its own,
 * built from the same texts). At 100,000 messages: the worker's JS heap (CDP
 * `HeapProfiler.collectGarbage` + `Runtime.getHeapUsage` on the worker's target) after 1,000
 * searches and over 10,000 more, open → first search, `context.build` at 4k tokens. Last, the
 * worker host's size with every chunk that can load and its start path (min+gz).
 *
 * AGENT_BENCH_SIZES=100,500 runs other sizes; AGENT_BENCH_SMOKE=1 runs 100 and 2,000 with few queries.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core'
import { bundleSize } from '../../scripts/bundle-size.js'
import { type AgentRequest, type AgentVariant, MESSAGES_PER_FACT, SESSIONS, type WriteSamples } from '../e2e/pages/bench-agent-protocol.js'
import { composeCorpus } from '../e2e/pages/agent-corpus.js'
import { makeCorpus } from '../e2e/pages/bench-corpus.js'
import { buildTestPages, repoRoot } from '../e2e/support/build-pages.js'
import { chromiumArgs, chromiumPath } from '../e2e/support/chromium.js'
import { type StaticServer, serveStatic } from '../e2e/support/static-server.js'
import { loadRealText, wordCurve } from './agent-corpus-source.js'
import { median, percentile, printRows, printTable } from './stats.js'

const smoke = process.env.AGENT_BENCH_SMOKE === '1'
const sizes = (process.env.AGENT_BENCH_SIZES ?? (smoke ? '100,2000' : '100,500,5000,20000,100000')).split(',').map(Number)
const largest = Math.max(...sizes)
const QUERIES = smoke ? 100 : 300
const BIG_SEARCHES = smoke ? 200 : 1_000
const MORE_SEARCHES = smoke ? 1_000 : 10_000
const BUILDS = smoke ? 10 : 50
/** Messages one block writes in one store before the other store's turn. */
const BLOCK = 500

/** The previous landing's figures on this path (README, docs/search-and-context.md and the issue that asked for this bench). */
const PREVIOUS = {
  storage: '2.8× raw rows',
  facts: '1.55× raw',
  search59k: '3.2× MiniSearch at 5.9k',
  search500: 'Node, ~500 messages: 9.6 vs 1.2 ms median (8×), 29 vs 5.1 ms p95',
  hostAll: '175.6 kB (186.9 kB in README now)',
  hostStart: '71.9 kB',
}

/** A Chromium profile kept across a restart. */
interface Browser {
  context: BrowserContext
  close(): Promise<void>
}
async function launch(dir: string): Promise<Browser> {
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
  })
  return { context, close: () => context.close() }
}

/**
 * The JS heap of the page's dedicated worker through CDP: the page's session auto-attaches to its
 * workers (not flattened, so messages go through `Target.sendMessageToTarget`, which Playwright's
 * page session can send), before the page starts its worker.
 */
async function workerTarget(
  cdp: CDPSession,
): Promise<{ ready: Promise<void>; measure(): Promise<number>; send(method: string, params?: Record<string, unknown>): Promise<unknown> }> {
  let sessionId = ''
  let calls = 0
  const waiting = new Map<number, (result: unknown) => void>()
  let attached!: () => void
  const ready = new Promise<void>((r) => (attached = r))
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker' && e.targetInfo.url.includes('bench-agent.worker')) {
      sessionId = e.sessionId
      attached()
    }
  })
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    if (e.sessionId !== sessionId) return
    const message = JSON.parse(e.message) as { id?: number; result?: unknown }
    if (message.id !== undefined) waiting.get(message.id)?.(message.result)
  })
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++calls
      waiting.set(id, resolve)
      void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) })
    })
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false })
  return {
    ready,
    send,
    async measure() {
      await send('HeapProfiler.enable')
      await send('HeapProfiler.collectGarbage')
      await send('HeapProfiler.collectGarbage')
      const { usedSize } = (await send('Runtime.getHeapUsage')) as { usedSize: number }
      return usedSize
    },
  }
}

/** A page of the bench in one origin, its worker started; `ask` forwards a request to the worker. */
interface BenchPage {
  page: Page
  ask<T>(request: AgentRequest): Promise<T>
  heap(): Promise<number>
  /** Runs `fn` under the CPU profiler of the worker when AGENT_BENCH_PROFILE names a folder; writes `<name>.cpuprofile` there and prints its top self times. */
  profiled<T>(name: string, fn: () => Promise<T>): Promise<T>
}
async function openBench(context: BrowserContext, origin: string): Promise<BenchPage> {
  const page = await context.newPage()
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('404')) console.error(`[page] ${m.text()}`)
  })
  await page.goto(`${origin}/bench-agent.html`)
  await page.waitForFunction(() => document.title === 'ready')
  const heap = await workerTarget(await context.newCDPSession(page))
  await page.evaluate(() => (window as unknown as { bench: { start(): Promise<void> } }).bench.start())
  await heap.ready
  return {
    page,
    ask: <T>(request: AgentRequest) =>
      page.evaluate((r) => (window as unknown as { bench: { ask(r: AgentRequest): Promise<unknown> } }).bench.ask(r), request) as Promise<T>,
    heap: heap.measure,
    async profiled(name, fn) {
      if (!profileDir) return fn()
      await heap.send('Profiler.enable')
      await heap.send('Profiler.setSamplingInterval', { interval: 100 })
      await heap.send('Profiler.start')
      const result = await fn()
      const { profile } = (await heap.send('Profiler.stop')) as { profile: CpuProfile }
      await writeFile(join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile))
      console.error(`[profile] ${name}: ${topSelf(profile)}`)
      return result
    },
  }
}

/** Where CPU profiles go (AGENT_BENCH_PROFILE), if anywhere. */
const profileDir = process.env.AGENT_BENCH_PROFILE
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  samples: number[]
  timeDeltas: number[]
}
/** The functions with the most self time in a profile, with their share. */
function topSelf(profile: CpuProfile): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, us]) => `\n   ${((100 * us) / total).toFixed(1)}% ${k}`)
    .join('')
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const label = (n: number) => n.toLocaleString('en')

/** Runs the suite and prints its tables. */
export async function runAgentPathBench(): Promise<void> {
  const real = loadRealText()
  const sentences = real.sentences
  const composed = composeCorpus(sentences, largest, QUERIES, 11)
  const synthetic = makeCorpus(20_000, 0, 11).texts
  const curves = [
    ['real mail replies as written (the source)', wordCurve(real.messages), real.messages.length],
    [`the bench corpus (${label(largest)} turns composed of their sentences)`, wordCurve(composed.texts), composed.texts.length],
    ['the synthetic corpus of the browser bench (20,000 turns)', wordCurve(synthetic), synthetic.length],
  ] as const
  printRows(
    `corpus: word-frequency curves (${label(sentences.length)} distinct sentences from ${label(real.messages.length)} messages of the SpamAssassin ham corpus, public domain)`,
    ['text', 'messages', 'words/message', 'distinct words', 'Zipf slope (ranks 1–1,000)', 'top 10 words', 'top 100', 'top 1,000', 'seen once'],
    curves.map(([name, c, n]) => [
      name,
      label(n),
      c.wordsPerMessage,
      label(c.types),
      c.zipfSlope.toFixed(2),
      pct(c.top10),
      pct(c.top100),
      pct(c.top1000),
      pct(c.hapax),
    ]),
  )
  console.log(
    `\n> sample queries: ${composed.queries
      .slice(0, 6)
      .map((q) => `"${q}"`)
      .join(', ')}`,
  )

  const root = await buildTestPages()
  const dir = await mkdtemp(join(tmpdir(), 'engram-agent-path-'))
  const servers = new Map<string, StaticServer>()
  const originOf = async (v: AgentVariant, n: number) => {
    const key = `${v}:${n}`
    if (!servers.has(key)) servers.set(key, await serveStatic(root, { isolated: true }))
    return servers.get(key)!.origin
  }
  let browser = await launch(dir)
  const version = (await browser.context.newPage().then(async (p) => {
    const v = await p.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? '')
    await p.close()
    return v
  })) as string
  const writes = new Map<number, Record<AgentVariant, WriteSamples>>()
  const heaps: Array<[string, number]> = []
  try {
    // Writes: both stores of a size at once, block by block, the order alternating.
    for (const n of sizes) {
      console.error(`[bench] agent-path: writing ${label(n)} messages`)
      const pages = {
        engram: await openBench(browser.context, await originOf('engram', n)),
        raw: await openBench(browser.context, await originOf('raw', n)),
      }
      const samples: Record<AgentVariant, WriteSamples> = { engram: { append: [], facts: [] }, raw: { append: [], facts: [] } }
      for (const v of ['engram', 'raw'] as const) await pages[v].ask({ cmd: 'init', variant: v, sentences, n, queries: QUERIES, create: true })
      for (let from = 0, block = 0; from < n; from += BLOCK, block++) {
        for (const v of block % 2 ? (['raw', 'engram'] as const) : (['engram', 'raw'] as const)) {
          const write = () => pages[v].ask<WriteSamples>({ cmd: 'write', from, to: Math.min(n, from + BLOCK) })
          const s = v === 'engram' && block === 1 ? await pages[v].profiled(`write-${n}`, write) : await write()
          samples[v].append.push(...s.append)
          samples[v].facts.push(...s.facts)
        }
      }
      writes.set(n, samples)
      if (n === largest) heaps.push([`after writing ${label(n)} messages (the store still open)`, await pages.engram.heap()])
      for (const v of ['engram', 'raw'] as const) {
        await pages[v].ask({ cmd: 'settle' })
        await pages[v].page.close()
      }
    }
    // The browser restarts on the same profile.
    await browser.close()
    browser = await launch(dir)
    const usage = new Map<number, Record<AgentVariant, number>>()
    for (const n of sizes) {
      const u = { engram: 0, raw: 0 }
      for (const v of ['engram', 'raw'] as const) {
        const p = await openBench(browser.context, await originOf(v, n))
        await p.ask({ cmd: 'init', variant: v, sentences: [], n: 0, queries: 0, create: false })
        u[v] = await p.ask<number>({ cmd: 'usage' })
        await p.page.close()
      }
      usage.set(n, u)
    }

    // Searches on the reopened stores.
    const search = new Map<number, { ours: number[]; theirs: number[] }>()
    let cold: [number, number] | undefined
    let build: { build: number[]; search: number[] } | undefined
    const leak: number[] = []
    for (const n of sizes) {
      console.error(`[bench] agent-path: searching ${label(n)} messages`)
      const p = await openBench(browser.context, await originOf('engram', n))
      // As many distinct queries as the largest size times: a repeated query would be answered from the query cache.
      await p.ask({ cmd: 'init', variant: 'engram', sentences, n, queries: Math.max(QUERIES, BIG_SEARCHES), create: false })
      if (n === largest) cold = await p.profiled(`open-${n}`, () => p.ask<[number, number]>({ cmd: 'open-first-search' }))
      const first = await p.profiled(`search-${n}`, () =>
        p.ask<{ ours: number[]; theirs: number[] }>({ cmd: 'search', count: n === largest ? BIG_SEARCHES : QUERIES, mini: true }),
      )
      search.set(n, first)
      if (n === largest) {
        heaps.push([`reopened, after ${label(BIG_SEARCHES)} searches`, await p.heap()])
        for (let done = 0; done < MORE_SEARCHES; done += MORE_SEARCHES / 5) {
          await p.ask({ cmd: 'search', count: MORE_SEARCHES / 5, mini: false })
          leak.push(await p.heap())
        }
        build = await p.profiled(`build-${n}`, () => p.ask<{ build: number[]; search: number[] }>({ cmd: 'build', count: BUILDS }))
      }
      await p.page.close()
    }

    // Tables.
    const writeRows = sizes.flatMap((n) => {
      const s = writes.get(n)!
      return [
        {
          name: `messages.append one by one, median, ${label(n)} messages`,
          ours: median(s.engram.append),
          baseline: median(s.raw.append),
          unit: 'ms',
          baselineName: 'raw Dexie put message + session, 1 tx',
          goal: '≤ 1.5×',
        },
        {
          name: `facts.set one by one, median, ${label(n / MESSAGES_PER_FACT)} facts among ${label(n)} messages`,
          ours: median(s.engram.facts),
          baseline: median(s.raw.facts),
          unit: 'ms',
          baselineName: 'raw Dexie put fact + version, 1 tx',
          goal: `≤ 1.3×; previous: ${PREVIOUS.facts}`,
        },
      ]
    })
    printTable(`agent path: writes in Chromium ${version} (dedicated worker, ${SESSIONS} sessions interleaved)`, writeRows)
    printRows(
      'agent path: writes, p95 (ms)',
      ['size', 'append', 'raw append', 'facts.set', 'raw fact + version'],
      sizes.map((n) => {
        const s = writes.get(n)!
        return [label(n), percentile(s.engram.append, 95), percentile(s.raw.append, 95), percentile(s.engram.facts, 95), percentile(s.raw.facts, 95)]
      }),
    )
    printTable(
      `agent path: storage after the browser restarted (navigator.storage.estimate of each store's origin, same profile reopened)`,
      sizes.map((n) => ({
        name: `bytes per message (rows + index + facts), ${label(n)} messages`,
        ours: usage.get(n)!.engram / n / 1024,
        baseline: usage.get(n)!.raw / n / 1024,
        unit: 'kB',
        baselineName: 'the same messages, sessions and facts as raw Dexie rows',
        goal: n === 5_000 || n === 20_000 ? `≤ 2.0×; previous: ${PREVIOUS.storage}` : '',
      })),
    )
    printTable(
      'agent path: search in Chromium (the reopened store; MiniSearch in a worker of its own, same texts and queries)',
      sizes.flatMap((n) => {
        const s = search.get(n)!
        const of = { unit: 'ms', baselineName: 'MiniSearch' }
        return [
          {
            ...of,
            name: `search median, ${label(n)} messages (${s.ours.length} distinct queries)`,
            ours: median(s.ours),
            baseline: median(s.theirs),
            goal: n >= 20_000 ? '< 1× (ahead)' : n >= 500 ? `≤ 2×${n === 500 ? `; previous: ${PREVIOUS.search500}` : `; previous: ${PREVIOUS.search59k}`}` : '',
          },
          {
            ...of,
            name: `search p95, ${label(n)} messages`,
            ours: percentile(s.ours, 95),
            baseline: percentile(s.theirs, 95),
            goal: n >= 100_000 ? '≤ 10 ms' : '',
          },
        ]
      }),
    )
    if (cold && build) {
      printTable(`agent path: the store of ${label(largest)} messages, reopened`, [
        { name: 'openMemory → first search answered', ours: cold[0], baseline: cold[1], unit: 'ms', baselineName: 'of which openMemory', goal: '≤ 50 ms' },
        {
          name: 'context.build at 4k tokens, median',
          ours: median(build.build),
          baseline: median(build.search),
          unit: 'ms',
          baselineName: 'one search (limit 20) of the same query',
          goal: '≤ 15 ms',
        },
      ])
      const base = heaps.find(([name]) => name.startsWith('reopened'))?.[1] ?? Number.NaN
      printRows(
        `agent path: the worker's JS heap (CDP collectGarbage + Runtime.getHeapUsage), ${label(largest)} messages`,
        ['when', 'used heap', 'goal'],
        [
          ...heaps.map(([name, bytes]) => [name, `${(bytes / 2 ** 20).toFixed(1)} MB`, name.startsWith('reopened') ? '≤ 64 MB' : 'info']),
          ...leak.map((bytes, i) => [
            `… after ${label(((i + 1) * MORE_SEARCHES) / 5)} more searches`,
            `${(bytes / 2 ** 20).toFixed(1)} MB (${bytes >= base ? '+' : ''}${((bytes - base) / 2 ** 20).toFixed(2)} MB)`,
            'flat',
          ]),
        ],
      )
    }
  } finally {
    await browser.close().catch(() => {})
    for (const s of servers.values()) await s.close()
    await rm(dir, { recursive: true, force: true })
  }
  await printSizes()
}

/** The worker host's size: every chunk that can load (sync and encryption included) and the start path. */
async function printSizes(): Promise<void> {
  const entryDir = join(repoRoot, 'node_modules', '.cache', 'engram-size')
  mkdirSync(entryDir, { recursive: true })
  const entry = join(entryDir, 'entry-agent-host.ts')
  await writeFile(entry, "import '@engram/worker/host'\n")
  const size = await bundleSize(entry, undefined)
  const kb = (n: number) => n / 1024
  printTable('agent path: the worker host, min+gz (scripts/bundle-size.ts)', [
    {
      name: '@engram/worker/host with every chunk that can load (sync, Yjs, encryption)',
      ours: kb(size.gzip),
      baseline: 150,
      unit: 'kB',
      baselineName: 'the goal',
      goal: `≤ 150 kB; previous: ${PREVIOUS.hostAll}`,
    },
    {
      name: '… its start path (loaded before the first call)',
      ours: kb(size.initialGzip),
      baseline: 70,
      unit: 'kB',
      baselineName: 'the goal',
      goal: `≤ 70 kB; previous: ${PREVIOUS.hostStart}`,
    },
  ])
}
