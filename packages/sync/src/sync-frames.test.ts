import { replicationOf } from '@engram/core/internal'
import 'fake-indexeddb/auto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import { YKeyValue } from 'y-utility/y-keyvalue'
import type { SyncDetails, SyncStatus } from '@engram/sync'
import { closeAll, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'

let relay: TestRelay
/** A relay that accepts frames of 64 KiB at most. */
let tight: TestRelay
/** A relay that closes every connection after its first message (rate limit, 4529). */
let grumpy: TestRelay
beforeAll(async () => {
  ;[relay, tight, grumpy] = await Promise.all([
    startTestRelay(),
    startTestRelay(['--max-message-bytes', String(64 * 1024)]),
    startTestRelay(['--message-burst', '1', '--messages-per-second', '0.001']),
  ])
}, 60_000)
afterAll(async () => {
  await Promise.all([relay?.stop(), tight?.stop(), grumpy?.stop()])
})

const VALUE = (i: number): string => `${i}:`.padEnd(100_000, String.fromCharCode(97 + i))

/** The facts a relay serves for `room`, read with the stock y-websocket client. */
async function factsOnRelay(server: TestRelay, userId: string): Promise<Map<string, unknown>> {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(server.url, `${userId}/p`, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    params: { token: await server.token(userId) },
    disableBc: true,
  })
  try {
    await new Promise<void>((resolve) => (provider.synced ? resolve() : provider.once('sync', () => resolve())))
    return new Map([...new YKeyValue<{ value: unknown }>(doc.getArray('facts')).map].map(([id, entry]) => [id, entry.val.value]))
  } finally {
    provider.destroy()
    doc.destroy()
  }
}

/** Resolves at the first status for which `check` is true. */
function statusWhere(replica: Replica, check: (status: SyncStatus, details: SyncDetails) => boolean): Promise<SyncDetails> {
  return new Promise((resolve) => {
    const now = replica.sync.details('p')
    if (check(now.status, now)) return resolve(now)
    const off = replica.sync.onStatus((projectId, status, details) => {
      if (projectId === 'p' && check(status, details)) {
        off()
        resolve(details)
      }
    })
  })
}

/** When `token()` was called; `reached(n)` resolves at the n-th call. */
function tokenLog() {
  const times: number[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  return {
    times,
    called() {
      times.push(Date.now())
      for (const w of waiters.filter((w) => times.length >= w.n)) w.resolve()
    },
    reached: (n: number) => new Promise<void>((resolve) => (times.length >= n ? resolve() : waiters.push({ n, resolve }))),
  }
}

async function offlineProjectWithBacklog(
  name: string,
  userId: string,
  server: TestRelay,
  tokens: ReturnType<typeof tokenLog>,
  options: Record<string, unknown> = {},
): Promise<Replica> {
  return openReplica(name, undefined, {
    userId,
    url: server.url,
    WebSocket,
    network: null,
    projectSync: false,
    token: () => {
      tokens.called()
      return server.token(userId)
    },
    ...options,
  })
}

describe('more than the relay takes in one frame', () => {
  it('12 facts of 100 kB, then sync on: split into frames, synced only once the relay holds all of them', async () => {
    const userId = 'u-wedge'
    const tokens = tokenLog()
    const a = await offlineProjectWithBacklog('a', userId, relay, tokens, { backoff: { initialMs: 50, maxMs: 400 } })
    const seen: SyncStatus[] = []
    try {
      for (let i = 0; i < 12; i++) await a.memory.facts.set('p', `big-${i}`, VALUE(i))
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p') seen.push(status)
      })
      await a.memory.projects.update('p', { sync: { enabled: true } })
      await a.sync.whenSynced('p')
      // 'synced' means the relay holds everything: read it back at once through another client.
      const held = await factsOnRelay(relay, userId)
      for (let i = 0; i < 12; i++) expect(held.get(`p/big-${i}`), `big-${i}`).toBe(VALUE(i))
      expect(tokens.times).toHaveLength(1)
      expect(seen).not.toContain('error')
      expect(seen.filter((s) => s === 'synced')).toHaveLength(1)
      expect(a.errors).toEqual([])
      expect(await replicationOf(a.memory).pending()).toEqual([])

      // and a new device receives the whole backlog through the relay
      const b = await openReplica('b', undefined, { userId, url: relay.url, WebSocket, network: null, token: () => relay.token(userId) })
      try {
        await b.sync.whenSynced('p')
        const facts = (await b.memory.facts.list('p')).items
        expect(facts.map((f) => f.value).sort()).toEqual(Array.from({ length: 12 }, (_, i) => VALUE(i)).sort())
      } finally {
        await closeAll([b])
      }
    } finally {
      await closeAll([a])
    }
  }, 60_000)

  it('learns a lower relay limit from close code 1009 (halving), without reporting synced before', async () => {
    const userId = 'u-halve'
    const tokens = tokenLog()
    const a = await offlineProjectWithBacklog('a', userId, relay, tokens, { maxFrameBytes: 4 * 1024 * 1024, backoff: { initialMs: 20, maxMs: 100 } })
    const seen: SyncStatus[] = []
    try {
      for (let i = 0; i < 12; i++) await a.memory.facts.set('p', `big-${i}`, VALUE(i))
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p') seen.push(status)
      })
      await a.memory.projects.update('p', { sync: { enabled: true } })
      await a.sync.whenSynced('p')
      expect(tokens.times.length).toBe(2) // one refused attempt (1.2 MB in one frame), then frames of at most 600 kB
      expect(seen.indexOf('synced')).toBe(seen.length - 1)
      const held = await factsOnRelay(relay, userId)
      expect(held.size).toBe(12)
      expect(a.errors).toEqual([])
    } finally {
      await closeAll([a])
    }
  }, 60_000)

  it('a change the relay can never take shows status error (frame_too_large) once, and retries back off', async () => {
    const userId = 'u-too-big'
    const tokens = tokenLog()
    const initialMs = 40
    const a = await offlineProjectWithBacklog('a', userId, tight, tokens, { backoff: { initialMs, maxMs: 320 } })
    const seen: SyncStatus[] = []
    try {
      await a.memory.facts.set('p', 'huge', VALUE(1)) // one struct of 100 kB; the relay takes 64 KiB
      await a.memory.facts.set('p', 'small', 'fits')
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p') seen.push(status)
      })
      await a.memory.projects.update('p', { sync: { enabled: true } })
      const details = await statusWhere(a, (status) => status === 'error')
      expect(details.reason).toBe('frame_too_large')
      expect(details.message).toMatch(/maxMessageBytes/)
      // retries go on, each one later than the last (the backoff is never reset by a refusal)
      await tokens.reached(6)
      const gaps = tokens.times.slice(1, 6).map((t, i) => t - tokens.times[i]!)
      for (const [i, gap] of gaps.entries()) expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(Math.min(320, initialMs * 2 ** i) / 2 - 2)
      expect(seen).not.toContain('synced')
      expect(a.sync.status('p')).toBe('error')
      expect(a.errors).toHaveLength(1) // told once, not at every attempt
      expect((a.errors[0] as { code?: string }).code).toBe('quota_exceeded')
    } finally {
      await closeAll([a])
    }
  }, 60_000)

  it('a relay that keeps closing the connection before the project synced shows error (relay_refused) once, never synced (a socket per room)', async () => {
    const userId = 'u-grumpy'
    const tokens = tokenLog()
    const a = await offlineProjectWithBacklog('a', userId, grumpy, tokens, { backoff: { initialMs: 20, maxMs: 80 }, transport: 'room' })
    const seen: SyncStatus[] = []
    try {
      await a.memory.facts.set('p', 'k', 'v')
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p') seen.push(status)
      })
      await a.memory.projects.update('p', { sync: { enabled: true } })
      const details = await statusWhere(a, (status) => status === 'error')
      expect(details.reason).toBe('relay_refused')
      expect(details.message).toMatch(/4529/)
      expect(tokens.times.length).toBe(3)
      await tokens.reached(5) // retries go on, and the status stays put
      expect(a.sync.status('p')).toBe('error')
      expect(seen).not.toContain('synced')
      expect(a.errors).toHaveLength(1)
    } finally {
      await closeAll([a])
    }
  }, 60_000)

  it('a relay that keeps refusing a document on the shared socket shows error (relay_refused) once, never synced; the socket stays', async () => {
    const userId = 'u-grumpy-mux'
    const tokens = tokenLog()
    const a = await offlineProjectWithBacklog('a', userId, grumpy, tokens, { backoff: { initialMs: 20, maxMs: 80 } })
    const seen: SyncStatus[] = []
    const refusals = async (): Promise<number> => {
      const text = await (await fetch(`${grumpy.url.replace('ws://', 'http://')}/metrics`)).text()
      return Number(/^engram_relay_documents_refused_total\{reason="rateLimited"\} (\d+)$/m.exec(text)?.[1] ?? 0)
    }
    const before = await refusals()
    try {
      await a.memory.facts.set('p', 'k', 'v')
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p') seen.push(status)
      })
      await a.memory.projects.update('p', { sync: { enabled: true } })
      const details = await statusWhere(a, (status) => status === 'error')
      expect(details.reason).toBe('relay_refused')
      expect(details.message).toMatch(/4529/)
      // Retries of the document go on over the same socket, and the status stays put.
      while ((await refusals()) - before < 5) await new Promise((r) => setTimeout(r, 20))
      expect(tokens.times).toHaveLength(1)
      expect(a.sync.status('p')).toBe('error')
      expect(seen).not.toContain('synced')
      expect(a.errors).toHaveLength(1)
    } finally {
      await closeAll([a])
    }
  }, 60_000)
})
