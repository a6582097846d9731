// The encryption benchmark, shared by Node (test/bench/encryption.ts, fake-indexeddb) and Chromium
// (bench-browser.worker.ts, real IndexedDB): each call on a store encrypted at rest beside the same
// call on a plain store, interleaved call by call in one run, medians compared.
import type { Memory } from '@engram/core'
import { makeCorpus } from './bench-corpus.js'

/** Sizes of the encryption benchmark. */
export interface EncryptionBenchConfig {
  /** Timed calls of each write (facts.set, appendExchange). */
  writes: number
  /** Messages in the stores that search and context.build read. */
  corpus: number
  /** Timed searches and context builds. */
  queries: number
}

/** One row: the call on the encrypted store (`ours`) beside the plain one (`baseline`). */
export interface EncryptionFigure {
  name: string
  ours: number
  baseline: number
  unit: string
  baselineName: string
  goal: string
}

/** Opens a fresh store: plain without `key`, encrypted at rest with it; `internals` are the search-index options tests and benchmarks pass. */
export type OpenStore = (key?: CryptoKey, internals?: Record<string, unknown>) => Promise<Memory>

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)] ?? NaN
}

/** Milliseconds now: wall time by default (the browser); Node passes its CPU time (fake-indexeddb is JavaScript in the same thread). */
type Clock = () => number
let clock: Clock = () => performance.now()

/** Times `call(store, i)` on both stores, alternating which goes first, after a warm-up; medians in ms. */
async function paired(stores: [Memory, Memory], n: number, call: (m: Memory, i: number) => Promise<unknown>): Promise<[number, number]> {
  const warm = Math.max(5, Math.floor(n / 10))
  for (let i = 0; i < warm; i++) for (const m of stores) await call(m, n + i)
  const samples: [number[], number[]] = [[], []]
  for (let i = 0; i < n; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0]
    for (const which of order) {
      const t0 = clock()
      await call(stores[which]!, i)
      samples[which]!.push(clock() - t0)
    }
  }
  return [median(samples[0]), median(samples[1])]
}

/** Runs the four calls and returns their figures (encrypted beside plain). */
export async function encryptionFigures(
  open: OpenStore,
  c: EncryptionBenchConfig,
  progress: (text: string) => void = () => {},
  time: Clock = () => performance.now(),
): Promise<EncryptionFigure[]> {
  clock = time
  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
  const figures: EncryptionFigure[] = []
  const row = (name: string, [plain, encrypted]: [number, number], goal: string) =>
    figures.push({ name, ours: encrypted, baseline: plain, unit: 'ms', baselineName: 'the same call, encryption off', goal })

  progress('encryption: writes')
  const writers: [Memory, Memory] = [await open(), await open(key)]
  const sessions: string[] = []
  for (const m of writers) {
    await m.projects.create({ id: 'p', name: 'Bench' })
    sessions.push((await m.sessions.create('p')).id)
  }
  row(
    'facts.set',
    await paired(writers, c.writes, (m, i) => m.facts.set('p', `key ${i}`, { n: i, note: `the user mentioned fact number ${i}` }, { tags: ['bench'] })),
    '≤ 1.3×',
  )
  row(
    'messages.appendExchange',
    await paired(writers, c.writes, (m, i) =>
      m.messages.appendExchange(
        sessions[writers.indexOf(m)]!,
        `Question ${i}: what did we decide about the weather in Oslo?`,
        `Answer ${i}: we decided to pack a coat and an umbrella.`,
      ),
    ),
    '≤ 1.3×',
  )
  for (const m of writers) await m.close()

  progress(`encryption: search and context over ${c.corpus} messages`)
  const corpus = makeCorpus(c.corpus, c.queries, 7)
  // Each reader counts the documents its background merges fold in, so timing starts once both indexes are merged.
  const merged = [0, 0]
  let wake = () => {}
  const counting = (i: number) => ({
    onMerge: (m: { merged: number }) => {
      merged[i]! += m.merged
      wake()
    },
  })
  const readers: [Memory, Memory] = [await open(undefined, counting(0)), await open(key, counting(1))]
  const readerSessions: string[] = []
  for (const m of readers) {
    await m.projects.create({ id: 'p', name: 'Bench' })
    const s = await m.sessions.create('p')
    readerSessions.push(s.id)
    for (let i = 0; i < corpus.texts.length; i += 500)
      await m.messages.appendMany(
        s.id,
        corpus.texts.slice(i, i + 500).map((content, j) => ({ role: (i + j) % 2 ? 'assistant' : 'user', content })),
      )
    for (let i = 0; i < 50; i++) await m.facts.set('p', `fact ${i}`, corpus.texts[i]!)
    await m.blocks.set('p', 'persona', 'A helpful assistant who remembers.')
  }
  const indexed = corpus.texts.length + 50 // the messages and the facts
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the seeded indexes merged ${merged.join(' and ')} of ${indexed} documents in 120 s`)), 120_000)
    wake = () => {
      if (merged.some((n) => n < indexed)) return
      clearTimeout(timer)
      resolve()
    }
    wake()
  })
  const query = (i: number) => corpus.queries[i % corpus.queries.length]!
  row('search (limit 10)', await paired(readers, c.queries, (m, i) => m.search('p', query(i), { limit: 10 })), '≤ 1.5×')
  row(
    'context.build (budget 2,000)',
    await paired(readers, c.queries, (m, i) => m.context.build('p', { sessionId: readerSessions[readers.indexOf(m)]!, query: query(i), budget: 2000 })),
    '≤ 1.5×',
  )
  for (const m of readers) await m.close()
  return figures
}
