/**
 * Extraction benchmark: `aiExtractor` on a model that answers at once and counts tokens (four
 * characters a token), over a long conversation the bench builds from the dialogue fixture
 * (generated in code from a seed; no held-out data), on fake-indexeddb:
 * - prompt tokens of an extraction call with 50 facts stored, beside a prompt that lists every
 *   fact and block (what an extractor without retrieval sends);
 * - prompt tokens of an observation call, beside the raw messages it covers;
 * - `turns.end` with the background extractor on and off;
 * - queue throughput (jobs/s) with the instant model, beside raw Dexie adding and deleting the same job rows.
 * Then `turns.end` on vs off again in Chromium (real IndexedDB, each store in its dedicated worker,
 * the model in the page); EXTRACTION_BENCH_BROWSER=0 skips it.
 * Size: EXTRACTION_BENCH_TURNS turns (default 200).
 */
import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { escapeMemoryText, openMemory, type Memory } from '@engram/core'
import { aiExtractor } from '@engram/ai-sdk'
import { generateDialogues } from '../fixtures/dialogues.js'
import { countTokens, type ScriptedCall, scriptedGenerate } from '../support/scripted-memory-model.js'
import { buildTestPages } from '../e2e/support/build-pages.js'
import { launchProfile } from '../e2e/support/chromium.js'
import { serveStatic } from '../e2e/support/static-server.js'
import type { ExtractionHarness } from '../e2e/pages/extraction-page.js'
import { median, printTable, timeEach, timeOnce } from './stats.js'

const TURNS = Number(process.env.EXTRACTION_BENCH_TURNS ?? 200)
const FACTS = 50
const OBSERVE_TOKENS = 3_000
const T0 = Date.UTC(2026, 0, 1)
let dbCounter = 0

/** The conversation: user and assistant turns of the dialogue fixture, paired, in order. */
function exchanges(n: number): { prompt: string; reply: string }[] {
  const out: { prompt: string; reply: string }[] = []
  for (const session of generateDialogues(11, 40).sessions) {
    for (let i = 0; i + 1 < session.turns.length; i += 2) {
      const [a, b] = [session.turns[i]!, session.turns[i + 1]!]
      out.push(a.role === 'user' ? { prompt: a.content, reply: b.content } : { prompt: b.content, reply: a.content })
      if (out.length === n) return out
    }
  }
  return out
}

/** A language model in the v3 spec (a plain object, as a provider's is) around a scripted doGenerate. */
function instantModel(answer: (call: ScriptedCall) => unknown) {
  const { calls, doGenerate } = scriptedGenerate(answer)
  const model = {
    specificationVersion: 'v3' as const,
    provider: 'bench',
    modelId: 'instant',
    supportedUrls: {},
    doGenerate: doGenerate as never,
    doStream: () => Promise.reject(new Error('not streamed')),
  }
  return { model, calls }
}

const factKey = (i: number) => `topic ${i % FACTS}`
/** Answers one fact per extraction (one of the 50 keys), and one observation per observer call. */
const answer = (call: ScriptedCall) =>
  call.system.startsWith('You compress') || call.system.startsWith('You condense')
    ? { observations: [{ text: 'The user and the assistant talked about their week.', priority: 'medium' }] }
    : { operations: [{ type: 'update_fact', key: factKey(call.prompt.length), value: 'mentioned again', reason: 'said' }] }

async function open(extractor?: ReturnType<typeof aiExtractor>): Promise<Memory> {
  return openMemory({
    appId: 'bench',
    userId: `extraction${++dbCounter}`,
    indexedDB: new IDBFactory(),
    IDBKeyRange,
    now: () => T0,
    ...(extractor ? { extractor } : {}),
  })
}

async function seed(memory: Memory): Promise<string> {
  await memory.projects.create({ name: 'P', id: 'p' })
  for (let i = 0; i < FACTS; i++) await memory.facts.set('p', factKey(i), `value of topic ${i}: something the user said about it`)
  await memory.blocks.set('p', 'human', 'Name: Ada. Lives in Lisbon. Likes long walks and pottery.')
  await memory.blocks.set('p', 'persona', 'A patient assistant that remembers what matters.')
  return (await memory.sessions.create('p')).id
}

/** Runs the extraction benchmark and prints its tables. */
export async function runExtractionBench(): Promise<void> {
  const talk = exchanges(TURNS)

  // 1 + 2. Prompt tokens, and turns.end with the extractor on (interleaved with off).
  const on = instantModel(answer)
  const withExtractor = await open(aiExtractor({ model: on.model, observeTokens: OBSERVE_TOKENS }))
  const without = await open()
  const sOn = await seed(withExtractor)
  const sOff = await seed(without)
  const endOn: number[] = []
  const endOff: number[] = []
  for (const [i, t] of talk.entries()) {
    const sides = [
      [withExtractor, sOn, endOn],
      [without, sOff, endOff],
    ] as const
    // Alternate which side goes first, so neither always follows the other's work.
    for (const [memory, sessionId, out] of i % 2 === 0 ? sides : [...sides].reverse()) {
      await memory.turns.begin('p', { sessionId, turnId: `t${i}`, prompt: t.prompt, budget: 2_000 })
      out.push(...(await timeEach(1, () => memory.turns.end({ sessionId, turnId: `t${i}`, reply: t.reply }))))
    }
  }
  await withExtractor.extraction.flush()
  const extractCalls = on.calls.filter((c) => c.system.startsWith('You maintain'))
  const observeCalls = on.calls.filter((c) => c.system.startsWith('You compress'))
  const tokensOf = (c: ScriptedCall) => countTokens(c.system) + countTokens(c.prompt)
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

  // The prompt an extractor without retrieval sends: every fact and block, then the exchange.
  const facts = (await withExtractor.facts.list('p')).items
  const blocks = await withExtractor.blocks.list('p')
  const fullPrompts = talk.map((t) =>
    [
      extractCalls[0]?.system ?? '',
      ...facts.map((f) => `- ${escapeMemoryText(f.key)}: ${escapeMemoryText(String(f.value))}`),
      ...blocks.map((b) => `- ${b.label}: ${escapeMemoryText(b.value)}`),
      `user: ${escapeMemoryText(t.prompt)}`,
      `assistant: ${escapeMemoryText(t.reply)}`,
    ].join('\n'),
  )
  // The raw text an observation call covers: the message lines of its prompt.
  const messagesOf = (c: ScriptedCall) => c.prompt.slice(c.prompt.indexOf('<messages>') + '<messages>'.length, c.prompt.lastIndexOf('</messages>'))
  const observedRaw = mean(observeCalls.map((c) => countTokens(messagesOf(c))))

  printTable(
    `Prompt tokens per call (${facts.length} facts stored, ${extractCalls.length} extraction calls for ${talk.length} turns, ${observeCalls.length} observation calls)`,
    [
      {
        name: 'extraction call (mean)',
        ours: mean(extractCalls.map(tokensOf)),
        baseline: mean(fullPrompts.map(countTokens)),
        unit: 'tokens',
        baselineName: 'every fact and block in the prompt',
        goal: '≤ 2,000',
      },
      {
        name: 'observation call (mean)',
        ours: mean(observeCalls.map(tokensOf)),
        baseline: observedRaw,
        unit: 'tokens',
        baselineName: 'the messages it covers, as text',
      },
    ],
  )
  printTable(`turns.end, ${talk.length} turns (median)`, [
    { name: 'turns.end, background extractor on', ours: median(endOn), baseline: median(endOff), unit: 'ms', baselineName: 'extractor off', goal: '≤ 1.1×' },
  ])
  await withExtractor.close()
  await without.close()

  // 3. Queue throughput: jobs queued while the model is held, then drained with the instant model.
  const rows = []
  for (const batchTokens of [1, 4_000]) {
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let held = true
    const q = instantModel(answer)
    const gated = {
      ...q.model,
      doGenerate: (async (options: never) => {
        if (held) await gate
        return (q.model.doGenerate as (o: never) => Promise<unknown>)(options)
      }) as never,
    }
    const memory = await open(aiExtractor({ model: gated, batchTokens, observeTokens: 0 }))
    const sessionId = await seed(memory)
    for (const [i, t] of talk.entries()) {
      await memory.turns.begin('p', { sessionId, turnId: `t${i}`, prompt: t.prompt, budget: 500 })
      await memory.turns.end({ sessionId, turnId: `t${i}`, reply: t.reply })
    }
    held = false
    const ms = await timeOnce(async () => {
      release()
      await memory.extraction.flush()
    })
    await memory.close()

    // Raw Dexie: the same job rows added, then deleted one transaction each (the queue's storage floor).
    const raw = new Dexie(`raw-extraction${++dbCounter}`, { indexedDB: new IDBFactory(), IDBKeyRange })
    raw.version(1).stores({ jobs: '++seq, [status+seq]' })
    await raw.open()
    const ids: number[] = []
    for (const t of talk) ids.push((await raw.table('jobs').add({ status: 'pending', prompt: t.prompt, reply: t.reply })) as number)
    const rawMs = await timeOnce(async () => {
      for (const id of ids) await raw.transaction('rw', ['jobs'], () => raw.table('jobs').delete(id))
    })
    raw.close()
    rows.push({
      name: `queue drain, batchTokens ${batchTokens} (${q.calls.length} model calls)`,
      ours: (talk.length / ms) * 1000,
      baseline: (talk.length / rawMs) * 1000,
      unit: 'jobs/s',
      baselineName: 'raw Dexie deleting the job rows',
    })
  }
  printTable(`Queue throughput, ${talk.length} jobs, instant model`, rows)
  if (process.env.EXTRACTION_BENCH_BROWSER !== '0') await browserFigures(talk)
}

/** `turns.end` with the extractor on vs off in Chromium, through the worker as apps run it. */
async function browserFigures(talk: readonly { prompt: string; reply: string }[]): Promise<void> {
  const root = await buildTestPages()
  const server = await serveStatic(root)
  const profile = await launchProfile('extraction-bench')
  try {
    const page = await profile.context.newPage()
    await page.goto(`${server.origin}/extraction.html`)
    await page.waitForFunction(() => document.title === 'ready')
    const turns = talk.map((t) => [t.prompt, t.reply] as [string, string])
    const result = await page.evaluate(([u, ts]) => (window as unknown as { extraction: ExtractionHarness }).extraction.bench(u, ts), [
      `bench-${Date.now().toString(36)}`,
      turns,
    ] as const)
    printTable(`Chromium, through the worker: turns.end, ${turns.length} turns (median)`, [
      {
        name: 'turns.end, background extractor on',
        ours: median(result.on),
        baseline: median(result.off),
        unit: 'ms',
        baselineName: 'extractor off',
        goal: '≤ 1.1×',
      },
    ])
    printTable(`Chromium: the queue left after the last turn, instant model`, [
      {
        name: `drain after the last turn.end (${result.calls} model calls in all)`,
        ours: result.drainMs,
        baseline: median(result.off),
        unit: 'ms',
        baselineName: 'one turns.end without extractor',
      },
    ])
  } finally {
    await profile.close()
    await server.close()
  }
}
