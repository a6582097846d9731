/**
 * Sync benchmark, transports: the device's one multiplexed socket (`/mux`,
 * the default) beside one y-websocket socket per document (`transport:
 * 'room'`), measured in the same run on the same relay:
 * - sockets one device holds with 20 projects × 10 sessions synced;
 * - a fresh device loading the eager part (the project documents and the 5
 *   most recent sessions of each) of 50 projects × 100 sessions (5,000);
 * - fact write → row in the other device's Dexie, median and p99.
 *
 * The per-room rows need a relay that allows more sockets per user than its
 * default of 100 (`--max-connections-per-user 2000` here): with the default it
 * refuses them, which is why the multiplexed socket exists.
 *
 * Run with `npm run bench -- sync` (SYNC_BENCH_FRESH_SESSIONS, default 100 per project, scales the fresh load).
 */
import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import { openMemory, type Memory } from '@engram/core'
import { startSync, type Sync, type SyncOptions } from '@engram/sync'
import { startTestRelay, type TestRelay } from '../../packages/sync/test/relay.js'
import { median, percentile, printRows, printTable } from './stats.js'

type Transport = NonNullable<SyncOptions['transport']>

const LATENCY_WRITES = Number(process.env.SYNC_BENCH_WRITES ?? 1000)
const FRESH = { projects: 50, sessions: Number(process.env.SYNC_BENCH_FRESH_SESSIONS ?? 100), eager: 5 }

/** The relay's `/metrics`, one value per series. */
async function metricsOf(relay: TestRelay): Promise<Map<string, number>> {
  const text = await (await fetch(relay.url.replace('ws://', 'http://') + '/metrics')).text()
  const values = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue
    const at = line.lastIndexOf(' ')
    values.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return values
}

const openDevice = (userId: string): Promise<Memory> => openMemory({ appId: 'bench', userId, indexedDB: new IDBFactory(), IDBKeyRange })

function syncOf(memory: Memory, relay: TestRelay, transport: Transport, sessions: SyncOptions['sessions'] = {}): Sync {
  return startSync(memory, {
    url: relay.url,
    token: () => relay.token(memory.userId),
    WebSocket,
    transport,
    sessions,
    backoff: { initialMs: 50, maxMs: 1000 },
    onError: (e) => console.warn(e),
  })
}

async function createProjects(memory: Memory, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await memory.projects.create({ id, name: id, sync: { enabled: true } })
    await memory.projects.setSync(id, { messages: true })
  }
}

/** Polls `check` every 10 ms (what a benchmark waits for has no single event). */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * Sockets the relay accepted between two readings of its metrics: a counter, so sockets of an
 * earlier measurement that close meanwhile do not count (the open-connections gauge went negative).
 */
const socketsOpened = (before: Map<string, number>, after: Map<string, number>): number =>
  (after.get('engram_relay_connections_opened_total') ?? 0) - (before.get('engram_relay_connections_opened_total') ?? 0)

/** Sockets the relay holds for one device with 20 projects × 10 sessions synced (all eager). */
async function measureSockets(relay: TestRelay, transport: Transport): Promise<{ sockets: number; ms: number; refused: number }> {
  const userId = `sockets-${transport}-${Date.now()}`
  const memory = await openDevice(userId)
  const projects = Array.from({ length: 20 }, (_, i) => `p${i}`)
  await createProjects(memory, projects)
  for (const id of projects)
    for (let s = 0; s < 10; s++) {
      const session = await memory.sessions.create(id, { id: `${id}-s${s}` })
      await memory.messages.append(session.id, { role: 'user', content: `message ${s} of project ${id}` })
    }
  const before = await metricsOf(relay)
  const t0 = performance.now()
  const sync = syncOf(memory, relay, transport, { eager: 10 })
  await sync.flush()
  for (const id of projects) await sync.whenSynced(id)
  const ms = performance.now() - t0
  const m = await metricsOf(relay)
  const sockets = socketsOpened(before, m)
  const refusedOf = (x: Map<string, number>) => [...x].filter(([k]) => k.includes('_refused_total{')).reduce((n, [, v]) => n + v, 0)
  await sync.close()
  await memory.close()
  return { sockets, ms, refused: refusedOf(m) - refusedOf(before) }
}

/** Writes FRESH.projects × FRESH.sessions sessions (one message each) to the relay from a seeding device. */
async function seedFresh(relay: TestRelay, userId: string): Promise<string[]> {
  const memory = await openDevice(userId)
  const projects = Array.from({ length: FRESH.projects }, (_, i) => `fresh${i}`)
  await createProjects(memory, projects)
  // Session documents written here close soon after: the seeding device stays within the relay's document quota.
  const sync = syncOf(memory, relay, 'mux', { eager: 0, idleMs: 200 })
  for (const id of projects) {
    for (let s = 0; s < FRESH.sessions; s++) {
      const session = await memory.sessions.create(id, { id: `${id}-s${s}` })
      await memory.messages.append(session.id, { role: 'user', content: `Where did I leave the notes for project ${id}, part ${s}?` })
    }
    await sync.flush()
    await sync.whenSynced(id)
  }
  await sync.close()
  await memory.close()
  return projects
}

/** A fresh device: projects made, sync started, until every project and its eager sessions' messages are in. */
async function measureFresh(
  relay: TestRelay,
  userId: string,
  projects: readonly string[],
  transport: Transport,
): Promise<{ ms: number; sockets: number; documents: number }> {
  const memory = await openDevice(userId)
  await createProjects(memory, projects)
  let arrived = 0
  await memory.changes.subscribe({ kinds: ['messages'] }, (batch) => {
    arrived += batch.filter((c) => c.origin === 'remote' && c.op === 'put').length
  })
  const before = await metricsOf(relay)
  const t0 = performance.now()
  const sync = syncOf(memory, relay, transport, { eager: FRESH.eager })
  const expected = projects.length * Math.min(FRESH.eager, FRESH.sessions)
  await until(() => arrived >= expected && projects.every((id) => sync.status(id) === 'synced'), `the eager part on a fresh device (${transport})`)
  const ms = performance.now() - t0
  const m = await metricsOf(relay)
  await sync.close()
  await memory.close()
  return {
    ms,
    sockets: socketsOpened(before, m),
    documents: m.get('engram_relay_user_documents_peak') ?? 0,
  }
}

/** Write on A → the row in B's Dexie through the relay, over `transport`. */
async function measureLatency(relay: TestRelay, transport: Transport): Promise<number[]> {
  const userId = `latency-${transport}-${Date.now()}`
  const [a, b] = [await openDevice(userId), await openDevice(userId)]
  await createProjects(a, ['p'])
  await createProjects(b, ['p'])
  const syncA = syncOf(a, relay, transport)
  const syncB = syncOf(b, relay, transport)
  await Promise.all([syncA.whenSynced('p'), syncB.whenSynced('p')])
  let waiting: { key: string; done: () => void } | undefined
  await b.changes.subscribe({ projectId: 'p', kinds: ['facts'] }, (batch) => {
    if (waiting && batch.some((c) => c.origin === 'remote' && c.id === `p/${waiting!.key}`)) waiting.done()
  })
  const samples: number[] = []
  for (let i = 0; i < LATENCY_WRITES + 20; i++) {
    const key = `k${i % 200}`
    const arrivedAt = new Promise<void>((done) => {
      waiting = { key, done }
    })
    const t0 = performance.now()
    await a.facts.set('p', key, { note: `value ${i}`, i })
    await arrivedAt
    if (i >= 20) samples.push(performance.now() - t0) // the first 20 warm up
  }
  await syncA.close()
  await syncB.close()
  await a.close()
  await b.close()
  return samples
}

/** Runs the transport benchmark and prints its tables. */
export async function runSyncTransportBench(): Promise<void> {
  const relay = await startTestRelay(['--max-connections-per-user', '2000', '--max-documents-per-user', '2000'])
  try {
    // Interleaved, best of 2 each (room first): on a shared machine one run mostly measures the neighbours and the first the JIT.
    const socketRuns: Array<Record<Transport, Awaited<ReturnType<typeof measureSockets>>>> = []
    for (let i = 0; i < 2; i++) {
      const room = await measureSockets(relay, 'room')
      socketRuns.push({ room, mux: await measureSockets(relay, 'mux') })
    }
    const bestSockets = (t: Transport) => socketRuns.map((r) => r[t]).reduce((a, b) => (b.ms < a.ms ? b : a))
    const mux = bestSockets('mux')
    const room = bestSockets('room')
    printTable('Sockets one device holds with 20 projects × 10 sessions synced (220 documents; times best of 2, interleaved)', [
      {
        name: 'sockets per device',
        ours: mux.sockets,
        baseline: room.sockets,
        unit: '',
        baselineName: "one socket per document (transport: 'room')",
        goal: '1',
      },
      { name: 'time to all synced', ours: mux.ms, baseline: room.ms, unit: 'ms', baselineName: "one socket per document (transport: 'room')" },
    ])
    printRows(
      'Refusals while the 220 documents synced',
      ['transport', 'refusals'],
      [
        ['mux', mux.refused],
        ['room (relay at --max-connections-per-user 2000; its default of 100 refuses them)', room.refused],
      ],
    )

    const userId = `fresh-${Date.now()}`
    const t0 = performance.now()
    const projects = await seedFresh(relay, userId)
    const seedMs = performance.now() - t0
    const freshRuns: Array<Record<Transport, Awaited<ReturnType<typeof measureFresh>>>> = []
    for (let i = 0; i < 2; i++) {
      const room = await measureFresh(relay, userId, projects, 'room')
      freshRuns.push({ room, mux: await measureFresh(relay, userId, projects, 'mux') })
    }
    const bestFresh = (t: Transport) => freshRuns.map((r) => r[t]).reduce((a, b) => (b.ms < a.ms ? b : a))
    const freshMux = bestFresh('mux')
    const freshRoom = bestFresh('room')
    const sessions = (FRESH.projects * FRESH.sessions).toLocaleString('en')
    printTable(
      `A fresh device loads the eager part of ${FRESH.projects} projects × ${sessions} sessions (${FRESH.projects} project documents + ${FRESH.eager} sessions each; best of 2, interleaved; seeding took ${(seedMs / 1000).toFixed(0)} s)`,
      [
        {
          name: 'time to the eager part synced',
          ours: freshMux.ms,
          baseline: freshRoom.ms,
          unit: 'ms',
          baselineName: "one socket per document (transport: 'room')",
          goal: '< 5,000 ms',
        },
        {
          name: 'sockets',
          ours: freshMux.sockets,
          baseline: freshRoom.sockets,
          unit: '',
          baselineName: "one socket per document (transport: 'room')",
          goal: '1 (relay default cap: 100 per user)',
        },
        {
          name: 'documents open on the relay for the user',
          ours: freshMux.documents,
          baseline: freshRoom.documents,
          unit: '',
          baselineName: "one socket per document (transport: 'room')",
          goal: '≤ 1,000 (relay default maxDocumentsPerUser)',
        },
      ],
    )

    // Four blocks in the order room, mux, mux, room: a machine whose load drifts during the run weighs on both alike.
    const latency: Record<Transport, number[]> = { room: [], mux: [] }
    for (const transport of ['room', 'mux', 'mux', 'room'] as const) latency[transport].push(...(await measureLatency(relay, transport)))
    const { room: latencyRoom, mux: latencyMux } = latency
    printTable(
      `Fact write → row in the other device's Dexie, multiplexed socket vs a room's own socket (${2 * LATENCY_WRITES} writes each, in blocks room, mux, mux, room)`,
      [
        {
          name: 'median',
          ours: median(latencyMux),
          baseline: median(latencyRoom),
          unit: 'ms',
          baselineName: "one socket per document (transport: 'room')",
          goal: '≤ 1.2×',
        },
        {
          name: 'p99',
          ours: percentile(latencyMux, 99),
          baseline: percentile(latencyRoom, 99),
          unit: 'ms',
          baselineName: "one socket per document (transport: 'room')",
          goal: '≤ 1.2×',
        },
      ],
    )
  } finally {
    await relay.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSyncTransportBench()
