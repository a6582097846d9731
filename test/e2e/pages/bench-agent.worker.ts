// The agent-path benchmark's worker (test/bench/agent-path.ts): one store per origin, written as an
// agent app writes — each message appended on its own, round-robin over 20 sessions, a fact set now
// and then — either by Engram or, in another origin, as raw Dexie rows of the same records. Node
// drives both origins block by block, alternating, restarts the browser and reopens the stores to
// read their storage, then searches (MiniSearch in a worker of its own beside Engram).
import { Dexie } from 'dexie'
import { openMemory, type Memory } from '@engram/core'
import { SCHEMA_V1 } from '../../../packages/core/src/catalog/schema.js'
import { type AgentCorpus, composeCorpus } from './agent-corpus.js'
import type { MiniRequest } from './bench-minisearch.worker.js'
import { type AgentRequest, type AgentVariant, MESSAGES_PER_FACT, SESSIONS, type WriteSamples } from './bench-agent-protocol.js'

const APP = 'agent-bench'
const USER = 'u1'
const PROJECT = 'bench'
const T0 = Date.UTC(2026, 0, 1)

let variant: AgentVariant = 'engram'
let corpus: AgentCorpus = { texts: [], queries: [] }
let memory: Memory | undefined
let raw: Dexie | undefined
let sessionIds: string[] = []
const rawSeq: number[] = []
let mini: { ask(request: MiniRequest): Promise<number>; close(): void } | undefined
let lastMerge = 0

async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Opens the origin's store (the same name after a restart). */
async function open(): Promise<void> {
  if (variant === 'engram') {
    memory = await openMemory({ appId: APP, userId: USER, onMerge: () => void (lastMerge = performance.now()) } as Parameters<typeof openMemory>[0])
    return
  }
  raw = new Dexie(`raw:${APP}:${USER}`, { chromeTransactionDurability: 'relaxed' })
  raw.version(1).stores(SCHEMA_V1)
  await raw.open()
}

/** A fact of the conversation: a key an extractor would name, a value from what was said. */
function factOf(i: number): { key: string; value: { text: string; turn: number } } {
  const text = corpus.texts[i]!
  const words = text.toLowerCase().match(/[a-z]{4,}/g) ?? ['note']
  return { key: `${words[0]}.${words[words.length - 1]}.${i}`, value: { text: text.slice(0, 120), turn: i } }
}

async function init(r: Extract<AgentRequest, { cmd: 'init' }>): Promise<number> {
  variant = r.variant
  corpus = composeCorpus(r.sentences, r.n, r.queries, 11)
  // Reopened after a restart: the corpus only (the store opens when asked, as the cold path is timed).
  if (!r.create) return corpus.texts.length
  await open()
  if (memory) {
    await memory.projects.create({ id: PROJECT, name: 'Agent bench' })
    sessionIds = []
    for (let s = 0; s < SESSIONS; s++) sessionIds.push((await memory.sessions.create(PROJECT, { title: `chat ${s}` })).id)
  } else {
    const db = raw!
    await db.table('projects').put({ id: PROJECT, name: 'Agent bench', sync: { enabled: false }, createdAt: T0, updatedAt: T0 })
    sessionIds = Array.from({ length: SESSIONS }, (_, s) => `0190${String(s).padStart(4, '0')}-0000-7000-8000-000000000000`)
    await db.table('sessions').bulkPut(sessionIds.map((id) => ({ id, projectId: PROJECT, status: 'active', startedAt: T0, lastActiveAt: T0, lastSeq: 0 })))
    rawSeq.length = 0
    for (let s = 0; s < SESSIONS; s++) rawSeq.push(0)
  }
  return corpus.texts.length
}

/** Message `i`: its session and role (each session alternates user and assistant). */
const placeOf = (i: number) => ({ s: i % SESSIONS, role: Math.floor(i / SESSIONS) % 2 ? ('assistant' as const) : ('user' as const) })

async function writeBlock(from: number, to: number): Promise<WriteSamples> {
  const out: WriteSamples = { append: [], facts: [] }
  for (let i = from; i < to; i++) {
    const { s, role } = placeOf(i)
    const content = corpus.texts[i]!
    if (memory) {
      const m = memory
      out.append.push(await time(() => m.messages.append(sessionIds[s]!, { role, content })))
    } else {
      const db = raw!
      const seq = ++rawSeq[s]!
      const now = T0 + i * 1000
      const row = {
        id: `0190${String(i).padStart(8, '0')}-${String(i % 10000).padStart(4, '0')}-7000-8000-00000000000${i % 10}`,
        sessionId: sessionIds[s]!,
        projectId: PROJECT,
        seq,
        role,
        content,
        tokens: Math.ceil(content.length / 4),
        createdAt: now,
      }
      out.append.push(
        await time(() =>
          db.transaction('rw', ['messages', 'sessions'], async () => {
            await db.table('messages').put(row)
            await db.table('sessions').put({ id: row.sessionId, projectId: PROJECT, status: 'active', startedAt: T0, lastActiveAt: now, lastSeq: seq })
          }),
        ),
      )
    }
    if ((i + 1) % MESSAGES_PER_FACT === 0) {
      const { key, value } = factOf(i)
      if (memory) {
        const m = memory
        out.facts.push(await time(() => m.facts.set(PROJECT, key, value)))
      } else {
        const db = raw!
        const now = T0 + i * 1000
        const hlc = `${String(now).padStart(13, '0')}.00000.dev`
        out.facts.push(
          await time(() =>
            db.transaction('rw', ['facts', 'factVersions'], async () => {
              await db.table('facts').put({
                id: `${PROJECT}/${key}`,
                projectId: PROJECT,
                key,
                value,
                confidence: 1,
                tags: [],
                tagKeys: [],
                createdAt: now,
                updatedAt: now,
                version: 1,
                hlc,
              })
              await db
                .table('factVersions')
                .put({ projectId: PROJECT, key, version: 1, value, validFrom: now, deleted: false, confidence: 1, hlc, origin: 'local' })
            }),
          ),
        )
      }
    }
  }
  return out
}

/** Lets the store's background merges finish (quiet for a second), then closes it. */
async function settle(): Promise<void> {
  if (memory) {
    await sleep(1000)
    while (performance.now() - lastMerge < 1000) await sleep(200)
    memory.close()
    memory = undefined
  }
  raw?.close()
  raw = undefined
}

/** After the restart: opens the store (Chromium reopens its backing store), closes it and reads the origin's usage once it is stable. */
async function usage(): Promise<number> {
  await open()
  if (memory) await memory.facts.get(PROJECT, 'absent')
  else await raw!.table('projects').get(PROJECT)
  memory?.close()
  raw?.close()
  memory = undefined
  raw = undefined
  let last = Number.NaN
  for (let i = 0; i < 30; i++) {
    await sleep(1000)
    const now = (await navigator.storage.estimate()).usage ?? Number.NaN
    if (now === last) return now
    last = now
  }
  return last
}

/** MiniSearch in a worker of its own (bench-minisearch.worker.ts): each search answers with the time it took there. */
function miniSearchWorker(): { ask(request: MiniRequest): Promise<number>; close(): void } {
  const worker = new Worker(new URL('./bench-minisearch.worker.ts', import.meta.url), { type: 'module' })
  return {
    ask: (request) =>
      new Promise((resolve, reject) => {
        worker.onmessage = (event: MessageEvent<{ ms: number }>) => resolve(event.data.ms)
        worker.onerror = (event) => reject(new Error(event.message))
        worker.postMessage(request)
      }),
    close: () => worker.terminate(),
  }
}

/** The cold path of an app reopened: `openMemory` → the first search answered; returns [total, of which open]. */
async function openFirstSearch(): Promise<[number, number]> {
  let openMs = 0
  const total = await time(async () => {
    openMs = await time(open)
    await memory!.search(PROJECT, corpus.queries[0]!, { mode: 'text' })
  })
  return [total, openMs]
}

/** Queries per block: one library alone for a block, the order alternating block by block, a pause between (each worker's GC settles). */
const BLOCK = 50
let queryAt = 0

/** `count` searches (the queries cycled); with `mini`, MiniSearch answers the same queries in alternating blocks. */
async function search(count: number, withMini: boolean): Promise<{ ours: number[]; theirs: number[] }> {
  if (!memory) await open()
  const m = memory!
  if (withMini && !mini) {
    mini = miniSearchWorker()
    await mini.ask({ cmd: 'build', texts: corpus.texts })
    for (const q of corpus.queries.slice(0, 10)) {
      await m.search(PROJECT, q, { mode: 'text' })
      await mini.ask({ cmd: 'search', query: q })
    }
  }
  const ours: number[] = []
  const theirs: number[] = []
  for (let done = 0, block = 0; done < count; done += BLOCK, block++) {
    const qs = Array.from({ length: Math.min(BLOCK, count - done) }, () => corpus.queries[queryAt++ % corpus.queries.length]!)
    const runOurs = async () => {
      for (const q of qs) ours.push(await time(() => m.search(PROJECT, q, { mode: 'text' })))
    }
    const runTheirs = async () => {
      for (const q of qs) theirs.push(await mini!.ask({ cmd: 'search', query: q }))
    }
    if (!withMini) await runOurs()
    else
      for (const run of block % 2 === 0 ? [runOurs, runTheirs] : [runTheirs, runOurs]) {
        await run()
        await sleep(100)
      }
  }
  return { ours, theirs }
}

/** `context.build` at a 4k budget in a session of the store, beside one search of the same query. */
async function builds(count: number): Promise<{ build: number[]; search: number[] }> {
  if (!memory) await open()
  const m = memory!
  const session = sessionIds[0] ?? (await m.sessions.list(PROJECT, { limit: 1 })).items[0]!.id
  const build: number[] = []
  const one: number[] = []
  for (let i = 0; i < count; i++) {
    const q = corpus.queries[i % corpus.queries.length]!
    build.push(await time(() => m.context.build(PROJECT, { sessionId: session, query: q, budget: 4000 })))
    one.push(await time(() => m.search(PROJECT, q, { limit: 20 })))
  }
  return { build, search: one }
}

async function handle(r: AgentRequest): Promise<unknown> {
  switch (r.cmd) {
    case 'init':
      return init(r)
    case 'write':
      return writeBlock(r.from, r.to)
    case 'settle':
      return settle()
    case 'usage':
      return usage()
    case 'open-first-search':
      return openFirstSearch()
    case 'search':
      return search(r.count, r.mini)
    case 'build':
      return builds(r.count)
    case 'heap':
      return (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? null
  }
}

self.addEventListener('message', (event: MessageEvent<AgentRequest & { id: number }>) => {
  const { id } = event.data
  handle(event.data).then(
    (result) => self.postMessage({ id, result }),
    (error: unknown) => self.postMessage({ id, error: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error) }),
  )
})
self.postMessage({ ready: true })
