/**
 * Agent-runtime benchmark: journal appends one by one and `load` of a 10,000-record
 * session, beside raw Dexie doing the same on the same table shapes, in one run on
 * fake-indexeddb. Size: RUNTIME_BENCH_N records (default 10,000).
 */
import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openMemory, type Memory } from '@engram/core'
import { SCHEMA_V1 } from '../../packages/core/src/catalog/schema.js'
import { median, percentile, printRows, printTable, timeEach } from './stats.js'

const N = Number(process.env.RUNTIME_BENCH_N ?? 10_000)
const LOADS = 15
const PAGES = 200
const T0 = Date.UTC(2026, 0, 1)
let dbCounter = 0

async function openEngram(): Promise<Memory> {
  return openMemory({ appId: 'bench', userId: `runtime${++dbCounter}`, indexedDB: new IDBFactory(), IDBKeyRange, now: () => T0 })
}

async function openRaw(): Promise<Dexie> {
  const db = new Dexie(`raw-runtime${++dbCounter}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  db.version(1).stores(SCHEMA_V1)
  await db.open()
  return db
}

const payload = (i: number) => ({ step: i, tool: 'web.search', note: `record ${i} of the agent session` })

/** Raw Dexie doing what an append must: next seq from a per-session counter, record and counter in one transaction. */
async function rawAppend(db: Dexie, sessionId: string, i: number): Promise<void> {
  await db.transaction('rw', ['journal', 'journalSessions'], async () => {
    const counters = await db.table('journalSessions').get(sessionId)
    const seq = (counters?.lastSeq ?? 0) + 1
    await db.table('journal').add({ sessionId, seq, kind: 'step', payload: payload(i), occurredAt: T0 })
    await db.table('journalSessions').put({ sessionId, lastSeq: seq, count: seq, first: T0, last: T0 })
  })
}

/** Runs the agent-runtime benchmark and prints its tables. */
export async function runRuntimeBench(): Promise<void> {
  const memory = await openEngram()
  const raw = await openRaw()
  const blind = await openRaw()

  // Interleave in chunks so both sides see the same machine load.
  const ours: number[] = []
  const base: number[] = []
  const plain: number[] = []
  for (let start = 0; start < N; start += 500) {
    const n = Math.min(500, N - start)
    ours.push(...(await timeEach(n, (i) => memory.journal.append('s', { kind: 'step', payload: payload(start + i) }))))
    base.push(...(await timeEach(n, (i) => rawAppend(raw, 's', start + i))))
    plain.push(
      ...(await timeEach(n, (i) =>
        blind.table('journal').add({ sessionId: 's', seq: start + i + 1, kind: 'step', payload: payload(start + i), occurredAt: T0 }),
      )),
    )
  }
  const check = await memory.journal.load('s')
  if (check.records.length !== N || check.lastSeq !== N) throw new Error(`journal holds ${check.records.length} records, expected ${N}`)

  // Alternate the two sides call by call so both see the same machine load.
  const loadOurs: number[] = []
  const loadBase: number[] = []
  for (let i = 0; i < LOADS; i++) {
    loadOurs.push(...(await timeEach(1, () => memory.journal.load('s'))))
    loadBase.push(...(await timeEach(1, () => raw.table('journal').where('[sessionId+seq]').between(['s', Dexie.minKey], ['s', Dexie.maxKey]).toArray())))
  }
  const pageOurs: number[] = []
  const pageBase: number[] = []
  for (let i = 0; i < PAGES; i++) {
    const after = (i * 37) % (N - 100)
    pageOurs.push(...(await timeEach(1, () => memory.journal.page('s', { after, limit: 100 }))))
    pageBase.push(
      ...(await timeEach(1, () => raw.table('journal').where('[sessionId+seq]').between(['s', after], ['s', Dexie.maxKey], false, true).limit(101).toArray())),
    )
  }

  printTable(`Journal, ${N.toLocaleString('en')} records in one session (median ms per call)`, [
    { name: 'append one by one', ours: median(ours), baseline: median(base), unit: 'ms', baselineName: 'raw Dexie: counter + add in one transaction' },
    { name: 'append one by one', ours: median(ours), baseline: median(plain), unit: 'ms', baselineName: 'raw Dexie: bare add, seq known (no counter)' },
    {
      name: `load whole session (${N} records)`,
      ours: median(loadOurs),
      baseline: median(loadBase),
      unit: 'ms',
      baselineName: 'raw Dexie: index range toArray',
    },
    { name: 'page of 100 after a cursor', ours: median(pageOurs), baseline: median(pageBase), unit: 'ms', baselineName: 'raw Dexie: index range limit(101)' },
  ])
  printRows(
    'Journal append latency spread (ms)',
    ['series', 'p50', 'p95', 'p99', 'appends/s'],
    [
      ['Engram journal.append', median(ours), percentile(ours, 95), percentile(ours, 99), 1000 / (ours.reduce((a, b) => a + b, 0) / ours.length)],
      ['raw Dexie, counter + add', median(base), percentile(base, 95), percentile(base, 99), 1000 / (base.reduce((a, b) => a + b, 0) / base.length)],
    ],
  )
  await memory.close()
  raw.close()
  blind.close()
}
