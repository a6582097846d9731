/**
 * Search benchmarks (issue 3): on a corpus of 100,000 messages, Engram's
 * IndexedDB BM25 search beside MiniSearch's in-memory index of the same corpus,
 * indexed vs unindexed appendExchange, open → first search, and context.build.
 * The corpus is loaded once; the unindexed appends go to the same store through a
 * connection opened without the index. Runs on fake-indexeddb in Node.
 * `SEARCH_BENCH_MESSAGES` shrinks it for a smoke run.
 */
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import MiniSearch from 'minisearch'
import { openMemory, type Memory } from '@engram/core'
import { seededRandom } from '../fixtures/conversations.js'
import { runRecallBench } from './recall.js'
import { median, percentile, printRows, printTable, timeEach, timeOnce } from './stats.js'

const MESSAGES = Number(process.env.SEARCH_BENCH_MESSAGES ?? 100_000)
const PER_SESSION = 100
const QUERIES = 300
const APPENDS = 300
const BUILDS = 50

/** A Zipf-like vocabulary of pronounceable pseudo-words plus everyday words. */
function makeVocabulary(rand: () => number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'ta', 'vo', 'shi', 'pa', 'dor', 'el', 'un', 'ri', 'sa', 'to', 'ber', 'qui', 'na', 'zel']
  const everyday =
    'project meeting dinner travel budget garden recipe flight hotel doctor school music movie weather coffee train office email report design'.split(' ')
  const words = new Set(everyday)
  while (words.size < 20_000) {
    let w = ''
    const n = 2 + Math.floor(rand() * 3)
    for (let i = 0; i < n; i++) w += syllables[Math.floor(rand() * syllables.length)]
    words.add(w)
  }
  return [...words]
}

function zipfPicker(words: string[], rand: () => number): () => string {
  const weights = words.map((_, i) => 1 / (i + 1))
  const cumulative: number[] = []
  let sum = 0
  for (const w of weights) cumulative.push((sum += w))
  return () => {
    const x = rand() * sum
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return words[lo]!
  }
}

const FILLER = ['the', 'and', 'i', 'we', 'to', 'a', 'is', 'about', 'with', 'for']

export function makeCorpus(n: number) {
  const rand = seededRandom(42)
  const pick = zipfPicker(makeVocabulary(rand), rand)
  const texts: string[] = []
  for (let i = 0; i < n; i++) {
    const len = 8 + Math.floor(rand() * 18)
    const words: string[] = []
    for (let j = 0; j < len; j++) words.push(rand() < 0.3 ? FILLER[Math.floor(rand() * FILLER.length)]! : pick())
    texts.push(words.join(' '))
  }
  const queries: string[] = []
  for (let i = 0; i < QUERIES; i++) queries.push(Array.from({ length: 2 + Math.floor(rand() * 3) }, pick).join(' '))
  return { texts, queries }
}

async function open(indexedDB: IDBFactory, extra: Record<string, unknown> = {}): Promise<Memory> {
  return openMemory({ appId: 'bench', userId: 'search', indexedDB, IDBKeyRange, ...extra })
}

/** Loads the corpus through memory.import (in chunks); returns the session ids. */
export async function load(memory: Memory, texts: string[]): Promise<string[]> {
  await memory.projects.create({ name: 'Bench', id: 'bench' })
  const t0 = Date.UTC(2025, 0, 1)
  const sessions: Record<string, unknown>[] = []
  const messages: Record<string, unknown>[] = []
  for (let i = 0; i < texts.length; i++) {
    const s = Math.floor(i / PER_SESSION)
    const sessionId = `s${String(s).padStart(5, '0')}`
    const createdAt = t0 + i * 60_000
    if (i % PER_SESSION === 0)
      sessions.push({
        id: sessionId,
        projectId: 'bench',
        status: 'closed',
        startedAt: createdAt,
        lastActiveAt: createdAt + PER_SESSION * 60_000,
        lastSeq: Math.min(PER_SESSION, texts.length - i),
      })
    messages.push({
      id: `m${String(i).padStart(7, '0')}`,
      sessionId,
      projectId: 'bench',
      seq: (i % PER_SESSION) + 1,
      role: i % 2 ? 'assistant' : 'user',
      content: texts[i]!,
      tokens: Math.ceil(texts[i]!.length / 4),
      createdAt,
    })
  }
  const chunk = 10_000
  for (let i = 0; i < messages.length; i += chunk) {
    const tables: Record<string, unknown[]> = { messages: messages.slice(i, i + chunk) }
    if (i === 0) tables.sessions = sessions
    await memory.import({ format: 'engram-dump', version: 1, exportedAt: t0, tables }, { mode: 'merge' })
  }
  return sessions.map((s) => s.id as string)
}

/** Runs the search suite and prints its tables. */
export async function runSearchBench(): Promise<void> {
  await runRecallBench()
  const { texts, queries } = makeCorpus(MESSAGES)
  const indexedDB = new IDBFactory()
  let memory = await open(indexedDB)
  const loadMs = await timeOnce(() => load(memory, texts))

  const mini = new MiniSearch<{ id: number; content: string }>({ fields: ['content'], idField: 'id' })
  const miniLoadMs = await timeOnce(() => mini.addAll(texts.map((content, id) => ({ id, content }))))

  // Open → first search, on a store that was closed (cold caches, nothing rebuilt).
  await memory.close()
  let firstHits = 0
  let openMs = 0
  const firstSearchMs = await timeOnce(async () => {
    const t0 = performance.now()
    memory = await open(indexedDB)
    openMs = performance.now() - t0
    firstHits = (await memory.search('bench', queries[0]!, { mode: 'text' })).length
  })

  const ours = await timeEach(queries.length, (i) => memory.search('bench', queries[i]!, { mode: 'text' }))
  const theirs = await timeEach(queries.length, (i) => mini.search(queries[i]!).slice(0, 10))
  const warm = await timeEach(queries.length, (i) => memory.search('bench', queries[i]!, { mode: 'text' }))
  // A query naming a time weighs a deeper list (its window can lift a candidate from far down).
  const dated = await timeEach(queries.length, (i) => memory.search('bench', `${queries[i]!} last week`, { mode: 'text' }))

  // Appends: the same appendExchange on the same 100k store (the corpus is loaded once), through
  // a second connection opened without the full-text index; indexed and unindexed calls alternate
  // so both see the same machine load.
  const plain = await open(indexedDB, { textIndex: false })
  const liveSession = await memory.sessions.create('bench')
  const plainSession = await plain.sessions.create('bench')
  const indexed: number[] = []
  const unindexed: number[] = []
  for (let i = 0; i < APPENDS; i++) {
    indexed.push(...(await timeEach(1, () => memory.messages.appendExchange(liveSession.id, texts[i]!, texts[i + 1]!))))
    unindexed.push(...(await timeEach(1, () => plain.messages.appendExchange(plainSession.id, texts[i]!, texts[i + 1]!))))
  }
  await plain.close()
  const builds = await timeEach(BUILDS, (i) => memory.context.build('bench', { sessionId: liveSession.id, query: queries[i]!, budget: 4000 }))
  const builds1k = await timeEach(BUILDS, (i) => memory.context.build('bench', { sessionId: liveSession.id, query: queries[i + BUILDS]!, budget: 1000 }))
  await memory.close()

  printTable(`Search on ${MESSAGES.toLocaleString('en')} messages (fake-indexeddb, Node)`, [
    {
      name: 'search median (first pass, cold terms)',
      ours: median(ours),
      baseline: median(theirs),
      unit: 'ms',
      baselineName: 'MiniSearch in memory',
      goal: '≤ 3×',
    },
    { name: 'search p95 (first pass)', ours: percentile(ours, 95), baseline: percentile(theirs, 95), unit: 'ms', baselineName: 'MiniSearch in memory' },
    { name: 'search median (second pass)', ours: median(warm), baseline: median(theirs), unit: 'ms', baselineName: 'MiniSearch in memory', goal: '≤ 3×' },
    { name: 'search p95 (second pass)', ours: percentile(warm, 95), baseline: percentile(theirs, 95), unit: 'ms', baselineName: 'MiniSearch in memory' },
    {
      name: 'search median, the query naming a time ("… last week")',
      ours: median(dated),
      baseline: median(theirs),
      unit: 'ms',
      baselineName: 'MiniSearch in memory',
    },
    {
      name: 'appendExchange median',
      ours: median(indexed),
      baseline: median(unindexed),
      unit: 'ms',
      baselineName: 'same store and append, no index',
      goal: '≤ 2.5×',
    },
    { name: 'load corpus', ours: loadMs, baseline: miniLoadMs, unit: 'ms', baselineName: 'MiniSearch addAll' },
  ])
  printRows(
    'Open and context',
    ['measurement', 'value', 'goal'],
    [
      ['openMemory → first search answered (no rebuild)', `${firstSearchMs.toFixed(1)} ms (${firstHits} hits)`, '< 300 ms'],
      [`… of which openMemory / first search "${queries[0]}"`, `${openMs.toFixed(1)} ms / ${(firstSearchMs - openMs).toFixed(1)} ms`, ''],
      ['context.build at 4k, median', `${median(builds).toFixed(2)} ms`, '< 25 ms'],
      ['context.build at 4k, p95', `${percentile(builds, 95).toFixed(2)} ms`, ''],
      ['context.build at 1k, median', `${median(builds1k).toFixed(2)} ms`, '< 25 ms'],
    ],
  )
}
