/**
 * Conversation sync benchmark (issue 17): a message appended on device A until
 * it is in device B's `messages.tail` through the real relay on loopback —
 * beside a bare Yjs update between two stock y-websocket clients through the
 * same relay, measured in the same run — the bytes A sends per message beside
 * the message's JSON, and the size of one session document holding 10,000
 * messages beside their JSON.
 *
 * Run alone: `npm run bench -- messages`
 */
import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { openMemory, type Memory, type MirroredRecord } from '@engram/core'
import { createMirrorDoc, startSync, type Sync } from '@engram/sync'
import { startTestRelay, type TestRelay } from '../../packages/sync/test/relay.js'
import { median, percentile, printRows, printTable } from './stats.js'
import { measureBareLatency, measureMirrorLatency } from './sync.js'

const APPENDS = Number(process.env.MESSAGES_BENCH_APPENDS ?? 500)
const DOC_MESSAGES = 10_000
const WARMUP = 20

async function openDevice(userId: string, relay: TestRelay, WS: typeof WebSocket): Promise<{ memory: Memory; sync: Sync }> {
  const memory = await openMemory({ appId: 'bench', userId, indexedDB: new IDBFactory(), IDBKeyRange })
  await memory.projects.create({ id: 'p', name: 'bench', sync: { enabled: true, messages: true } })
  const sync = startSync(memory, { url: relay.url, token: () => relay.token(userId), WebSocket: WS, onError: (e) => console.warn(e) })
  await sync.whenSynced('p')
  return { memory, sync }
}

/** A sentence of chat-like text, different per message. */
const text = (i: number): string =>
  `Message ${i}: could you remind me where I left the blue bicycle on Tuesday, and whether the lock code is still 4${i % 1000}?`

/** Append on A → the message in B's tail, through the relay; bytes A sends per message. */
async function measureLatency(relay: TestRelay): Promise<{ samples: number[]; local: number[]; wirePerMessage: number; messageJson: number }> {
  const userId = `bench-messages-${Date.now()}`
  let sent = 0
  class CountingWebSocket extends WebSocket {
    override send(data: never, ...rest: never[]): void {
      sent += (data as Uint8Array).byteLength
      ;(super.send as (...args: unknown[]) => void)(data, ...rest)
    }
  }
  const a = await openDevice(userId, relay, CountingWebSocket)
  const b = await openDevice(userId, relay, WebSocket)
  const session = await a.memory.sessions.create('p', { title: 'bench' })
  // B learns the session from the project document and opens its document.
  await a.sync.flush()
  await b.sync.openSession('p', session.id)
  // Arrivals on B by message id; a waiter for the id A's append returned.
  const arrived = new Set<string>()
  let waiter: { id: string; done: () => void } | undefined
  await b.memory.changes.subscribe({ projectId: 'p', kinds: ['messages'] }, (batch) => {
    for (const c of batch) if (c.origin === 'remote') arrived.add(c.id)
    if (waiter && arrived.has(waiter.id)) waiter.done()
  })
  const samples: number[] = []
  const local: number[] = []
  let json = 0
  let counted = 0
  for (let i = 0; i < APPENDS + WARMUP; i++) {
    if (i === WARMUP) sent = 0
    const t0 = performance.now()
    const message = await a.memory.messages.append(session.id, { role: i % 2 === 0 ? 'user' : 'assistant', content: text(i) })
    const committed = performance.now() - t0
    if (!arrived.has(message.id))
      await new Promise<void>((done) => {
        waiter = { id: message.id, done }
      })
    const tail = await b.memory.messages.tail(session.id, 1)
    if (tail[0]?.id !== message.id) throw new Error(`message ${message.id} is not last in B's tail`)
    if (i >= WARMUP) {
      samples.push(performance.now() - t0)
      local.push(committed)
      json += JSON.stringify(message).length
      counted++
    }
  }
  await a.sync.close()
  await b.sync.close()
  await a.memory.close()
  await b.memory.close()
  return { samples, local, wirePerMessage: sent / counted, messageJson: json / counted }
}

/** One session document with 10,000 messages (published as the mirror does) beside the messages' JSON. */
function measureSessionDoc(): { bytes: number; json: number } {
  const doc = new Y.Doc()
  const mirror = createMirrorDoc(doc, 'p', undefined, undefined, ['messages'])
  let json = 0
  const t = Date.UTC(2026, 0, 1)
  const records: MirroredRecord[] = []
  for (let i = 0; i < DOC_MESSAGES; i++) {
    const at = `${String(t + i * 1000).padStart(13, '0')}.00000.dev0123456789ab`
    const message = {
      id: `0194b${String(i).padStart(7, '0')}-0000-7000-8000-000000000000`,
      sessionId: '0194b000-0000-7000-8000-0000000000aa',
      projectId: 'p',
      seq: i + 1,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: text(i),
      tokens: 30,
      createdAt: t + i * 1000,
    }
    json += JSON.stringify(message).length
    const { seq: _seq, ...travelling } = message
    records.push({ kind: 'messages', projectId: 'p', id: message.id, hlc: at, row: { ...travelling, at, hlc: at } })
  }
  // Appended in batches of one exchange, as a chat writes them.
  for (let i = 0; i < records.length; i += 2) void mirror.publish(records.slice(i, i + 2))
  return { bytes: Y.encodeStateAsUpdate(doc).byteLength, json }
}

/** Runs the conversation sync benchmark and prints its tables. */
export async function runMessagesSyncBench(): Promise<void> {
  const doc = measureSessionDoc()
  printRows(
    `One session document with ${DOC_MESSAGES.toLocaleString('en')} messages (goal ≤ 1.5× the messages' JSON)`,
    ['what', 'bytes', 'messages JSON bytes', 'doc / JSON'],
    [['session document (Yjs state)', doc.bytes, doc.json, doc.bytes / doc.json]],
  )
  const relay = await startTestRelay()
  try {
    const bare = await measureBareLatency(relay)
    const m = await measureLatency(relay)
    // The kinds that synced before, through the same code and relay: what this machine gives right now.
    const facts = await measureMirrorLatency(relay)
    printTable(`Message appended on A → in B's messages.tail, through the relay on loopback (${APPENDS} appends)`, [
      {
        name: 'median',
        ours: median(m.samples),
        baseline: median(bare),
        unit: 'ms',
        baselineName: 'bare Yjs update, 2 stock clients, same relay',
        goal: '≤ 15 ms',
      },
      {
        name: 'p99',
        ours: percentile(m.samples, 99),
        baseline: percentile(bare, 99),
        unit: 'ms',
        baselineName: 'bare Yjs update, 2 stock clients, same relay',
        goal: '≤ 60 ms',
      },
    ])
    printTable('The same message latency beside a fact write → row in the other Dexie (same relay, same run; SYNC_BENCH_WRITES writes)', [
      { name: 'median', ours: median(m.samples), baseline: median(facts.samples), unit: 'ms', baselineName: 'fact write, same path' },
      { name: 'p99', ours: percentile(m.samples, 99), baseline: percentile(facts.samples, 99), unit: 'ms', baselineName: 'fact write, same path' },
    ])
    printRows(
      'Per message',
      ['what', 'median / mean'],
      [
        ['the local append itself, ms (median, included above)', median(m.local)],
        ['bytes A sends to the relay per message (mean)', m.wirePerMessage],
        ['the message as JSON, bytes (mean)', m.messageJson],
        ['wire / JSON', m.wirePerMessage / m.messageJson],
      ],
    )
  } finally {
    await relay.stop()
  }
}
