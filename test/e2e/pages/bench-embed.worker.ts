// The embedder's benchmarks, run in a dedicated worker as apps run the SDK (test/bench/embed.ts drives them).
import { type Embedder, type Memory, openMemory } from '@engram/core'
import { LOCAL_DIMENSIONS, LOCAL_MODEL_ID, localEmbedder, workerEmbedder } from '@engram/embed-local'
import { Dexie } from 'dexie'
import { makeCorpus } from './bench-corpus.js'
import { counting } from './counting-embedder.js'

/** What the page asks for. */
export type EmbedBenchCommand =
  | { cmd: 'load' }
  | { cmd: 'throughput'; n: number }
  | { cmd: 'backfill'; n: number; sets: number; modelWorker: boolean; watchMs: number }
  | { cmd: 'search'; n: number; queries: number }
  | { cmd: 'storage'; variant: 'raw' | 'text' | 'vectors'; n: number }

/** Where the page's assets hold the model files and the WASM binaries (copied there by test/bench/embed.ts). */
const ASSETS = { modelUrl: '/models/use-lite/', wasmPaths: '/tfjs/' }

const percentile = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
let dbs = 0
const run = Date.now()
const open = (extra: Record<string, unknown> = {}) =>
  openMemory({ appId: 'embed-bench', userId: `${run}-${++dbs}`, ...extra } as Parameters<typeof openMemory>[0])

/** A stand-in for the model with its id and dimensions (words hashed into the vector): stored vectors for the search timing. */
const standIn: Embedder = {
  dimensions: LOCAL_DIMENSIONS,
  model: LOCAL_MODEL_ID,
  async embed(texts) {
    return texts.map((text) => {
      const v = new Float32Array(LOCAL_DIMENSIONS)
      for (const w of text.toLowerCase().split(/\W+/)) {
        let h = 0
        for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0
        v[h % LOCAL_DIMENSIONS]! += 1
      }
      return v
    })
  },
}

async function fill(memory: Memory, texts: readonly string[]): Promise<void> {
  await memory.projects.create({ name: 'Bench', id: 'bench' })
  for (let s = 0; s * 100 < texts.length; s++) {
    const session = await memory.sessions.create('bench')
    const chunk = texts.slice(s * 100, s * 100 + 100)
    await memory.messages.appendMany(
      session.id,
      chunk.map((content, j) => ({ role: j % 2 ? ('assistant' as const) : ('user' as const), content })),
    )
  }
}

async function factsSetTimes(memory: Memory, n: number, tag: string): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await memory.facts.set('bench', `${tag}.${i % 50}`, { i, note: 'a value the agent keeps' })
    times.push(performance.now() - t0)
    await sleep(5)
  }
  return times
}

async function usage(): Promise<number> {
  let last = Number.NaN
  for (let i = 0; i < 20; i++) {
    await sleep(1000)
    const now = (await navigator.storage.estimate()).usage ?? Number.NaN
    if (now === last) return now
    last = now
  }
  return last
}

async function handle(c: EmbedBenchCommand): Promise<unknown> {
  if (c.cmd === 'load') {
    const embedder = localEmbedder(ASSETS)
    const info = await embedder.load()
    return { ...info, crossOriginIsolated: self.crossOriginIsolated }
  }
  if (c.cmd === 'throughput') {
    const embedder = localEmbedder(ASSETS)
    await embedder.load()
    const { texts, queries } = makeCorpus(c.n, 60, 11)
    const t0 = performance.now()
    for (let i = 0; i < texts.length; i += 32) await embedder.embed(texts.slice(i, i + 32))
    const batchMs = performance.now() - t0
    const single: number[] = []
    for (const q of queries) {
      const t = performance.now()
      await embedder.embed([q])
      single.push(performance.now() - t)
    }
    return { perSecond: (texts.length / batchMs) * 1000, queryMedianMs: percentile(single, 50), queryP95Ms: percentile(single, 95) }
  }
  if (c.cmd === 'backfill') {
    const { texts } = makeCorpus(c.n, 0, 13)
    const first = await open()
    const userId = first.userId
    await fill(first, texts)
    await sleep(1000)
    const idle = await factsSetTimes(first, c.sets, 'idle')
    await first.close()
    const model = c.modelWorker
      ? workerEmbedder(new Worker(new URL('./bench-embed-model.worker.ts', import.meta.url), { type: 'module' }))
      : localEmbedder(ASSETS)
    const embedder = counting(model)
    await embedder.embed(['warm the model before the store opens'])
    const warmed = embedder.done
    const t0 = performance.now()
    const again = await openMemory({ appId: 'embed-bench', userId, embedder })
    const during = await factsSetTimes(again, c.sets, 'busy')
    const embeddedWhileTimed = embedder.done - warmed
    // The rest of the backfill is watched for a while, not to its end (at a few sentences a second, 10,000 take most of an hour here).
    await Promise.race([embedder.until(warmed + texts.length), sleep(Math.max(0, c.watchMs - (performance.now() - t0)))])
    const watchedMs = performance.now() - t0
    const embedded = embedder.done - warmed
    await again.close()
    const stats = { idleP95: percentile(idle, 95), idleMedian: percentile(idle, 50), busyP95: percentile(during, 95), busyMedian: percentile(during, 50) }
    return { ...stats, watchedMs, embedded, embeddedWhileTimed }
  }
  if (c.cmd === 'search') {
    const { texts, queries: all } = makeCorpus(c.n, c.queries + 20, 17)
    // Warm-up queries of their own: the store keeps recent query vectors.
    const queries = all.slice(0, c.queries)
    const warmUp = all.slice(c.queries)
    const seeded = counting(standIn)
    const first = await open({ embedder: seeded })
    const userId = first.userId
    await fill(first, texts)
    await seeded.until(texts.length)
    await sleep(1000)
    await first.close()
    const embedder = localEmbedder(ASSETS)
    await embedder.load()
    const memory = await openMemory({ appId: 'embed-bench', userId, embedder })
    const times = { text: [] as number[], hybrid: [] as number[] }
    for (const q of warmUp) await memory.search('bench', q, { mode: 'hybrid' })
    for (const [i, q] of queries.entries()) {
      for (const mode of i % 2 ? (['text', 'hybrid'] as const) : (['hybrid', 'text'] as const)) {
        const t = performance.now()
        await memory.search('bench', q, { mode })
        times[mode].push(performance.now() - t)
      }
    }
    await memory.close()
    return {
      textMedian: percentile(times.text, 50),
      hybridMedian: percentile(times.hybrid, 50),
      textP95: percentile(times.text, 95),
      hybridP95: percentile(times.hybrid, 95),
    }
  }
  const { texts } = makeCorpus(c.n, 0, 19)
  if (c.variant === 'raw') {
    const db = new Dexie(`raw-${run}`)
    db.version(1).stores({ messages: 'id, [sessionId+seq]' })
    await db.open()
    const rows = texts.map((content, i) => ({
      id: `m${String(i).padStart(8, '0')}`,
      sessionId: `s${Math.floor(i / 100)}`,
      projectId: 'bench',
      seq: i % 100,
      role: i % 2 ? 'assistant' : 'user',
      content,
      createdAt: run + i,
    }))
    for (let i = 0; i < rows.length; i += 100) await db.table('messages').bulkPut(rows.slice(i, i + 100))
    db.close()
  } else {
    const embedder = c.variant === 'vectors' ? counting(localEmbedder(ASSETS)) : undefined
    const memory = await open(embedder ? { embedder } : {})
    await fill(memory, texts)
    if (embedder) await embedder.until(texts.length)
    await sleep(2000)
    await memory.close()
  }
  return await usage()
}

self.addEventListener('message', (event: MessageEvent<EmbedBenchCommand>) => {
  handle(event.data).then(
    (result) => self.postMessage({ type: 'done', result }),
    (error: unknown) => self.postMessage({ type: 'error', message: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) }),
  )
})
self.postMessage({ type: 'ready' })
