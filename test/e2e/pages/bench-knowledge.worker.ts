// The knowledge benchmark, inside a dedicated worker as apps run the SDK (test/bench/knowledge.ts prints it).
import { Dexie } from 'dexie'
import { openMemory, type Dump, type Memory } from '@engram/core'
import { entityId } from '../../../packages/core/src/entities/entity-rows.js'
import { seededRandom } from '../../fixtures/conversations.js'
import { makeCorpus } from './bench-corpus.js'

/** Sizes of one run. */
export interface KnowledgeBenchConfig {
  entities: number
  relations: number
  messages: number
  /** Timed calls per figure. */
  calls: number
}
/** One row of a table: ours beside a baseline measured in the same run. */
export interface KnowledgeFigure {
  name: string
  ours: number
  baseline: number
  unit: string
  baselineName: string
  goal: string
}

const T0 = Date.UTC(2024, 0, 1)
const DAY = 86_400_000
const NOW = T0 + 800 * DAY
const PROJECT = 'bench'
const progress = (text: string) => self.postMessage({ type: 'progress', text })
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

/** Alternates ours and the baseline call by call, so both meet the same state of the machine. */
async function interleaved(n: number, ours: (i: number) => Promise<unknown>, raw: (i: number) => Promise<unknown>): Promise<[number[], number[]]> {
  const a: number[] = []
  const b: number[] = []
  for (let i = 0; i < n; i++) {
    if (i % 2) {
      b.push(await time(() => raw(i)))
      a.push(await time(() => ours(i)))
    } else {
      a.push(await time(() => ours(i)))
      b.push(await time(() => raw(i)))
    }
  }
  return [a, b]
}

type Row = Record<string, unknown>
const pad = (i: number) => String(i).padStart(5, '0')
const personName = (i: number) => `Person ${pad(i)}`

/**
 * The graph: a fifth of the entities organisations, the rest people. Each person has a job
 * history of three `works_at` assertions (single-valued: each closes the one before); the rest
 * of the relations are `knows` between people (multi-valued, entity objects) and `likes` with a
 * literal. Ids and stamps are made the way the store makes them.
 */
function graphDump(config: KnowledgeBenchConfig): { dump: Dump; people: string[] } {
  const rand = seededRandom(7)
  const orgs = Math.floor(config.entities / 5)
  const peopleN = config.entities - orgs
  const entities: Row[] = []
  const people: string[] = []
  const entity = (type: string, name: string, i: number) => {
    const id = entityId(PROJECT, type, name)
    entities.push({
      id,
      projectId: PROJECT,
      type,
      name,
      aliases: [],
      observations: [`${name} was met in ${2020 + (i % 5)}`],
      nameKeys: [],
      createdAt: T0,
      updatedAt: T0,
      hlc: stamp(i),
    })
    return id
  }
  let counter = 0
  const stamp = (i: number) => `${T0 + i}.00000.00000000000000b1`
  const relId = () => {
    const n = counter++
    return `01900000-${String(Math.floor(n / 1e8)).padStart(4, '0')}-7000-8000-${String(n).padStart(12, '0')}`
  }
  const orgIds = Array.from({ length: orgs }, (_, i) => entity('organisation', `Company ${pad(i)}`, i))
  for (let i = 0; i < peopleN; i++) people.push(entity('person', personName(i), i))
  const relations: Row[] = []
  const relation = (subjectId: string, predicate: string, object: { objectId: string } | { value: string }, validFrom: number) =>
    relations.push({
      id: relId(),
      projectId: PROJECT,
      subjectId,
      predicate,
      ...object,
      validFrom,
      confidence: 1,
      createdAt: validFrom,
      updatedAt: validFrom,
      hlc: stamp(counter),
    })
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  for (const p of people) for (let j = 0; j < 3; j++) relation(p, 'works_at', { objectId: pick(orgIds) }, T0 + (j * 250 + Math.floor(rand() * 200)) * DAY)
  const likes = ['tea', 'chess', 'climbing', 'jazz', 'cycling', 'sushi', 'hiking', 'poetry']
  while (relations.length < config.relations) {
    const s = pick(people)
    if (rand() < 0.75) {
      const o = pick(people)
      if (o !== s) relation(s, 'knows', { objectId: o }, T0 + Math.floor(rand() * 700) * DAY)
    } else relation(s, 'likes', { value: pick(likes) }, T0 + Math.floor(rand() * 700) * DAY)
  }
  const project = { id: PROJECT, name: 'Bench', sync: { enabled: false }, createdAt: T0, updatedAt: T0 }
  return { dump: { format: 'engram-dump', version: 1, exportedAt: T0, tables: { projects: [project], entities, relations } }, people }
}

/** The conversation of the context figure: `n` turns in sessions of 100, imported as an app restores a backup. */
function messagesDump(n: number): Dump {
  const { texts } = makeCorpus(n, 0, 11)
  const sessions: Row[] = []
  const messages: Row[] = []
  texts.forEach((content, i) => {
    const s = Math.floor(i / 100)
    const sessionId = `0190${String(s).padStart(4, '0')}-0000-7000-8000-000000000000`
    const createdAt = T0 + i * 60_000
    if (i % 100 === 0)
      sessions.push({ id: sessionId, projectId: PROJECT, status: 'closed', startedAt: createdAt, lastActiveAt: createdAt + 6_000_000, lastSeq: 100 })
    messages.push({
      id: `0190${String(i).padStart(8, '0')}-${String(i % 10000).padStart(4, '0')}-7000-8000-00000000000${i % 10}`,
      sessionId,
      projectId: PROJECT,
      seq: (i % 100) + 1,
      role: i % 2 ? 'assistant' : 'user',
      content,
      tokens: Math.ceil(content.length / 4),
      createdAt,
    })
  })
  return { format: 'engram-dump', version: 1, exportedAt: T0, tables: { sessions, messages } }
}

/** Raw Dexie on the same database: the rows an entity is subject or object of (no merges, no windows). */
async function rawRelations(raw: Dexie, id: string): Promise<Row[]> {
  return raw.transaction('r', ['relations'], async () => {
    const [out, into] = await Promise.all([
      raw.table('relations').where('subjectId').equals(id).toArray(),
      raw.table('relations').where('objectId').equals(id).toArray(),
    ])
    return [...out, ...into]
  })
}

/** Raw Dexie on the same database: a breadth-first walk of `depth` hops over every stored relation. */
async function rawAround(raw: Dexie, id: string, depth: number): Promise<number> {
  return raw.transaction('r', ['relations', 'entities'], async () => {
    const seen = new Set([id])
    let frontier = [id]
    let relations = 0
    for (let hop = 0; hop < depth && frontier.length > 0; hop++) {
      // One equality read per id and side, all at once (faster in Chromium than an anyOf cursor).
      const parts = await Promise.all(
        frontier.flatMap((e) => [raw.table('relations').where('subjectId').equals(e).toArray(), raw.table('relations').where('objectId').equals(e).toArray()]),
      )
      const [out, into] = [parts.flat(), [] as Row[]]
      relations += out.length + into.length
      const next = new Set<string>()
      for (const r of [...out, ...into]) for (const e of [r.subjectId, r.objectId] as (string | undefined)[]) if (e && !seen.has(e)) next.add(e)
      for (const e of next) seen.add(e)
      await raw.table('entities').bulkGet([...next])
      frontier = [...next]
    }
    return relations
  })
}

async function runKnowledge(config: KnowledgeBenchConfig): Promise<{ figures: KnowledgeFigure[]; notes: string[] }> {
  const figures: KnowledgeFigure[] = []
  const notes: string[] = []
  const userId = `k-${Date.now().toString(36)}`
  const memory: Memory = await openMemory({ appId: 'bench-knowledge', userId, now: () => NOW })
  const { dump, people } = graphDump(config)
  progress(`import ${config.entities} entities, ${(dump.tables.relations ?? []).length} relations`)
  const graphMs = await time(() => memory.import(dump, { mode: 'merge' }))
  progress(`import ${config.messages} messages`)
  const messagesMs = await time(() => memory.import(messagesDump(config.messages), { mode: 'merge' }))
  notes.push(
    `setup: ${config.entities.toLocaleString('en')} entities and ${(dump.tables.relations ?? []).length.toLocaleString('en')} relations imported in ${(graphMs / 1000).toFixed(1)} s, ${config.messages.toLocaleString('en')} messages in ${(messagesMs / 1000).toFixed(1)} s`,
  )
  const raw = new Dexie(`engram:bench-knowledge:${userId}`)
  await raw.open()
  const rand = seededRandom(99)
  const sample = Array.from({ length: config.calls }, () => people[Math.floor(rand() * people.length)]!)
  const scale = `${config.entities.toLocaleString('en')} entities, ${(dump.tables.relations ?? []).length.toLocaleString('en')} relations`

  // Warm both paths (the first call loads the relations code; the imports' index merges settle meanwhile).
  for (const id of sample.slice(0, 50)) {
    await memory.relations.current(PROJECT, id)
    await rawRelations(raw, id)
  }
  progress('relations.current')
  const [current, currentRaw] = await interleaved(
    config.calls,
    (i) => memory.relations.current(PROJECT, sample[i]!),
    (i) => rawRelations(raw, sample[i]!),
  )
  figures.push({
    name: `relations.current(person), median, ${scale}`,
    ours: median(current),
    baseline: median(currentRaw),
    unit: 'ms',
    baselineName: 'raw Dexie: the same rows by subject and by object, 1 tx',
    goal: '≤ 5 ms',
  })
  progress('relations.asOf')
  const [asOf, asOfRaw] = await interleaved(
    config.calls,
    (i) => memory.relations.asOf(PROJECT, sample[i]!, T0 + 300 * DAY),
    (i) => rawRelations(raw, sample[i]!),
  )
  figures.push({
    name: `relations.asOf(person, a year ago), median, ${scale}`,
    ours: median(asOf),
    baseline: median(asOfRaw),
    unit: 'ms',
    baselineName: 'raw Dexie: the same rows by subject and by object, 1 tx',
    goal: 'info',
  })
  progress('relations.around')
  const sizes: number[] = []
  const [around, aroundRaw] = await interleaved(
    config.calls,
    async (i) => sizes.push((await memory.relations.around(PROJECT, sample[i]!, { depth: 2, limit: 1000 })).relations.length),
    (i) => rawAround(raw, sample[i]!, 2),
  )
  figures.push({
    name: `relations.around(person, depth 2, limit 1,000), median, ${scale}`,
    ours: median(around),
    baseline: median(aroundRaw),
    unit: 'ms',
    baselineName: 'raw Dexie: the same two-hop walk over every stored relation (no windows), 1 tx',
    goal: '≤ 20 ms',
  })
  notes.push(`around(depth 2): median ${median(sizes)} relations true now per walk`)

  progress('context.build')
  const session = '01900000-0000-7000-8000-000000000000'
  const query = (i: number) => `Where does ${personName(Number(sample[i]!.split('%20').pop()))} work now, and who do they know from the garden project?`
  const noKnowledge = ['blocks', 'facts', 'recalled', 'summaries', 'recent', 'lessons', 'patterns', 'limitations'] as const
  await memory.context.build(PROJECT, { sessionId: session, query: query(0), budget: 4000 })
  const withSection: number[] = []
  const [ctx, ctxRaw] = await interleaved(
    config.calls,
    async (i) => {
      const built = await memory.context.build(PROJECT, { sessionId: session, query: query(i), budget: 4000 })
      withSection.push(built.sections.find((s) => s.name === 'knowledge')?.items ?? 0)
    },
    (i) => memory.context.build(PROJECT, { sessionId: session, query: query(i), budget: 4000, sections: [...noKnowledge] }),
  )
  figures.push({
    name: `context.build at 4k tokens with the knowledge section, median, ${config.messages.toLocaleString('en')} messages + ${scale}`,
    ours: median(ctx),
    baseline: median(ctxRaw),
    unit: 'ms',
    baselineName: 'the same build without the knowledge section',
    goal: '≤ 25 ms',
  })
  notes.push(`context.build: median ${median(withSection)} knowledge lines kept per build`)
  raw.close()
  memory.close()
  return { figures, notes }
}

self.addEventListener('message', (event: MessageEvent) => {
  const data = event.data as { cmd?: string; config?: KnowledgeBenchConfig }
  if (data?.cmd !== 'run') return
  runKnowledge(data.config!).then(
    (result) => self.postMessage({ type: 'done', result }),
    (error: unknown) =>
      self.postMessage({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error) }),
  )
})
self.postMessage({ type: 'ready' })
