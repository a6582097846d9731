import 'fake-indexeddb/auto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { muxConnector } from '@engram/sync'
import { closeAll, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'

/** Resolves when `check` holds, tried every 20 ms. */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

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

/** Sums a labelled counter over its labels. */
const total = (m: Map<string, number>, name: string): number => [...m].filter(([k]) => k.startsWith(`${name}{`)).reduce((n, [, v]) => n + v, 0)

function device(relay: TestRelay, name: string, userId: string, sessions: { eager?: number; idleMs?: number } = {}): Promise<Replica> {
  return openReplica(name, undefined, {
    userId,
    url: relay.url,
    token: () => relay.token(userId),
    WebSocket,
    backoff: { initialMs: 40, maxMs: 400 },
    sessions,
  })
}

describe('one socket per device (the relay multiplexes its documents)', () => {
  let relay: TestRelay
  beforeAll(async () => {
    relay = await startTestRelay()
  }, 60_000)
  afterAll(async () => {
    await relay?.stop()
  })

  it('20 projects × 10 sessions on one device: one socket, every document synced, no refusal; a second device converges', async () => {
    const a = await device(relay, 'a', 'u-many', { eager: 10 })
    const b = await device(relay, 'b', 'u-many', { eager: 10 })
    try {
      const projects = Array.from({ length: 20 }, (_, i) => `p${i}`)
      for (const id of projects) {
        for (const r of [a, b]) {
          await r.memory.projects.create({ id, name: id, sync: { enabled: true } })
          await r.memory.projects.setSync(id, { messages: true })
        }
      }
      for (const id of projects) {
        for (let s = 0; s < 10; s++) {
          const session = await a.memory.sessions.create(id, { id: `${id}-s${s}` })
          await a.memory.messages.append(session.id, { role: 'user', content: `message ${s} of ${id}` })
        }
      }
      await a.sync.flush()
      for (const id of projects) await a.sync.whenSynced(id)
      const m = await metricsOf(relay)
      // Device b holds its own socket (for project p) already: two in all, one per device.
      expect(m.get('engram_relay_connections')).toBe(2)
      expect(m.get('engram_relay_mux_connections')).toBe(2)
      expect(m.get('engram_relay_connections_opened_total')).toBe(2)
      expect(m.get('engram_relay_mux_documents')).toBeGreaterThanOrEqual(20 * 11)
      expect(total(m, 'engram_relay_documents_refused_total')).toBe(0)
      expect(total(m, 'engram_relay_connections_refused_total')).toBe(0)
      for (const id of projects) expect(a.sync.details(id)).toMatchObject({ status: 'synced' })

      for (const id of projects) {
        await until(() => b.sync.status(id) === 'synced', `project ${id} synced on b`)
        for (let s = 0; s < 10; s++) {
          await until(async () => (await b.memory.messages.tail(`${id}-s${s}`, 5).catch(() => [])).length === 1, `session ${id}-s${s} on b`)
        }
      }
      const after = await metricsOf(relay)
      expect(after.get('engram_relay_connections_opened_total')).toBe(2)
      expect(total(after, 'engram_relay_documents_refused_total')).toBe(0)
    } finally {
      await closeAll([a, b])
    }
  }, 180_000)

  it("reads the relay's time on the socket before any document opens, and every document's own reading before its state goes out", async () => {
    const log: string[] = []
    const openedBefore = (await metricsOf(relay)).get('engram_relay_documents_opened_total') ?? 0
    const connector = muxConnector({
      url: relay.url,
      token: () => relay.token('u-gate'),
      WebSocket,
      network: null,
      clock: async (relayTime) => {
        log.push(`socket clock ${Math.abs(relayTime - Date.now()) < 5000 ? 'near' : 'far'}`)
        // Held until a round trip to the relay: it has opened no document of this socket meanwhile.
        const opened = (await metricsOf(relay)).get('engram_relay_documents_opened_total') ?? 0
        log.push(`socket clock done (${opened - openedBefore} opened)`)
      },
    })
    const docs = [new Y.Doc(), new Y.Doc()]
    docs[0]!.getText('t').insert(0, 'first')
    const synced = docs.map(
      (doc, i) =>
        new Promise<void>((resolve) => {
          connector({
            doc,
            room: `u-gate/p${i}`,
            projectId: `p${i}`,
            setStatus: (status) => {
              log.push(`p${i} ${status}`)
              if (status === 'synced') resolve()
            },
            beforeSync: async (relayTime) => {
              log.push(`p${i} reads ${relayTime === undefined ? 'nothing' : 'the time'}`)
            },
          })
        }),
    )
    await Promise.all(synced)
    connector.destroy()
    expect(log.slice(0, 4)).toEqual(['p0 connecting', 'p1 connecting', 'socket clock near', 'socket clock done (0 opened)'])
    for (const i of [0, 1]) expect(log.indexOf(`p${i} reads the time`)).toBeLessThan(log.indexOf(`p${i} synced`))
    expect(connector.socketsOpened).toBe(1)
  })

  it('project a / session b/c and project a/b / session c are two rooms: purging one leaves the other', async () => {
    const a = await device(relay, 'a', 'u-rooms')
    try {
      await a.memory.projects.create({ id: 'a', name: 'a', sync: { enabled: true } })
      await a.memory.projects.create({ id: 'a/b', name: 'a/b', sync: { enabled: true } })
      await a.memory.projects.setSync('a', { messages: true })
      await a.memory.projects.setSync('a/b', { messages: true })
      await a.memory.sessions.create('a', { id: 'b/c' })
      await a.memory.sessions.create('a/b', { id: 'c' })
      await a.memory.messages.append('b/c', { role: 'user', content: 'in project a' })
      await a.memory.messages.append('c', { role: 'user', content: 'in project a/b' })
      await a.sync.flush()
      await a.sync.whenSynced('a')
      await a.sync.whenSynced('a/b')
      await a.memory.sessions.purge('b/c')
      await until(async () => (await metricsOf(relay)).get('engram_relay_documents_dropped_total') === 1, 'the purged room dropped')
    } finally {
      await closeAll([a])
    }
    // A fresh device reads both from the relay: the purged session is gone, the other keeps its message.
    const fresh = await device(relay, 'fresh', 'u-rooms')
    try {
      for (const id of ['a', 'a/b']) {
        await fresh.memory.projects.create({ id, name: id, sync: { enabled: true } })
        await fresh.memory.projects.setSync(id, { messages: true })
      }
      await fresh.sync.whenSynced('a/b')
      await fresh.sync.openSession('a/b', 'c')
      await until(async () => (await fresh.memory.messages.tail('c', 5).catch(() => [])).length === 1, 'session c of a/b on the fresh device')
      expect((await fresh.memory.messages.tail('c', 5)).map((m) => m.content)).toEqual(['in project a/b'])
      await fresh.sync.whenSynced('a')
      expect(await fresh.memory.sessions.get('b/c')).toBeUndefined()
    } finally {
      await closeAll([fresh])
    }
  }, 60_000)
})

describe('a slow reader of many documents', () => {
  it("a fresh device loads 30 documents (900 kB) through one socket on loopback with the relay's send buffer at 128 KiB, never closed as a slow reader", async () => {
    const relay = await startTestRelay(['--max-buffered-bytes', String(128 * 1024)])
    const a = await device(relay, 'a', 'u-buffer', { eager: 30 })
    const b = await device(relay, 'b', 'u-buffer', { eager: 30 })
    try {
      await a.memory.projects.setSync('p', { messages: true })
      for (let i = 0; i < 30; i++) {
        await a.memory.sessions.create('p', { id: `s${i}` })
        await a.memory.messages.append(`s${i}`, { role: 'user', content: `${i} `.repeat(15_000) })
      }
      await a.sync.flush()
      await a.sync.whenSynced('p')
      await b.memory.projects.setSync('p', { messages: true })
      await until(
        async () => {
          for (let i = 0; i < 30; i++) if ((await b.memory.messages.tail(`s${i}`, 1).catch(() => [])).length !== 1) return false
          return b.sync.status('p') === 'synced'
        },
        'every session on b',
        60_000,
      )
      const m = await metricsOf(relay)
      expect(m.get('engram_relay_connections_closed_total{reason="slowConsumer"}') ?? 0).toBe(0)
      expect(m.get('engram_relay_connections_opened_total')).toBe(2)
    } finally {
      await closeAll([a, b])
      await relay.stop()
    }
  }, 90_000)
})

describe('quotas that free up', () => {
  it('purging sessions frees the stored bytes: a user writes and purges more than the quota over time', async () => {
    const relay = await startTestRelay(['--max-bytes-per-user', '60000'])
    const a = await device(relay, 'a', 'u-bytes')
    try {
      await a.memory.projects.setSync('p', { messages: true })
      await a.sync.whenSynced('p')
      // Six rounds of ~20 kB each: 120 kB written in all, never more than ~25 kB held.
      for (let round = 0; round < 6; round++) {
        const session = await a.memory.sessions.create('p', { id: `round-${round}` })
        await a.memory.messages.append(session.id, { role: 'user', content: `${round} `.repeat(10_000) })
        await a.sync.flush()
        await a.sync.whenSynced('p')
        expect(a.sync.details('p')).toMatchObject({ status: 'synced' })
        await a.memory.sessions.purge(session.id)
        await until(async () => (await metricsOf(relay)).get('engram_relay_documents_dropped_total') === round + 1, `round ${round} dropped`)
      }
      const m = await metricsOf(relay)
      expect(total(m, 'engram_relay_documents_refused_total')).toBe(0)
      expect(m.get('engram_relay_user_bytes_peak')).toBeLessThan(30_000)
    } finally {
      await closeAll([a])
      await relay.stop()
    }
  }, 90_000)

  it('a document past maxDocumentsPerUser is refused alone (4405, the socket and the others go on) and opens once another closes', async () => {
    const relay = await startTestRelay(['--max-documents-per-user', '3'])
    const a = await device(relay, 'a', 'u-docs', { eager: 0, idleMs: 300 })
    try {
      await a.memory.projects.setSync('p', { messages: true })
      await a.sync.whenSynced('p')
      await a.memory.sessions.create('p', { id: 's1' })
      await a.memory.sessions.create('p', { id: 's2' })
      await a.memory.messages.append('s1', { role: 'user', content: 'one' })
      await a.memory.messages.append('s2', { role: 'user', content: 'two' })
      await a.sync.flush()
      await a.sync.whenSynced('p')
      // Three documents open (p, s1, s2): a third session is one too many while they are.
      await a.memory.sessions.create('p', { id: 's3' })
      void a.memory.messages.append('s3', { role: 'user', content: 'three' })
      await until(() => a.sync.details('p').reason === 'relay_refused', 'the refusal of s3 shown on the project')
      expect(a.sync.details('p').message).toMatch(/4405/)
      const refused = await metricsOf(relay)
      expect(refused.get('engram_relay_documents_refused_total{reason="roomQuotaExceeded"}')).toBeGreaterThanOrEqual(1)
      expect(refused.get('engram_relay_connections_opened_total')).toBe(1)
      expect(refused.get('engram_relay_connections')).toBe(1)
      // s1 and s2 close once idle; s3 opens on its next attempt and the project syncs.
      await until(() => a.sync.status('p') === 'synced', 'the project synced once s3 is in', 30_000)
      const m = await metricsOf(relay)
      expect(m.get('engram_relay_connections_opened_total')).toBe(1)
      expect(m.get('engram_relay_user_documents_limit')).toBe(3)
    } finally {
      await closeAll([a])
      await relay.stop()
    }
  }, 90_000)
})
