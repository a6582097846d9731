import 'fake-indexeddb/auto'
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { SyncDetails, SyncStatus } from '@engram/sync'
import { closeAll, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'

let relay: TestRelay
/** A port nothing listens on: connections to it are refused. */
let closedPort: number
beforeAll(async () => {
  relay = await startTestRelay()
  const probe = createServer()
  closedPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)))
  await new Promise((resolve) => probe.close(resolve))
}, 60_000)
afterAll(async () => {
  await relay?.stop()
})

/** A `ws` WebSocket that cannot reach the relay while `state.down` (the relay is down or moved; the network is fine). */
function unreachableRelay() {
  const state = { down: true }
  class MaybeWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(state.down ? `ws://127.0.0.1:${closedPort}/` : url, protocols)
    }
  }
  return { WebSocket: MaybeWebSocket, state }
}

/** Resolves at the first status of project `p` for which `check` is true. */
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

describe('a relay that cannot be reached', () => {
  it('shows error (unreachable) after the first rounds while retrying, offline when the device is, and synced once it is back', async () => {
    const userId = 'u-unreachable'
    const relayState = unreachableRelay()
    const network = new EventTarget()
    let tokens = 0
    const waiters: Array<{ n: number; resolve: () => void }> = []
    const tokensReached = (n: number) => new Promise<void>((resolve) => (tokens >= n ? resolve() : waiters.push({ n, resolve })))
    const a = await openReplica('a', undefined, {
      userId,
      url: relay.url,
      WebSocket: relayState.WebSocket,
      network,
      backoff: { initialMs: 10, maxMs: 40 },
      token: () => {
        tokens++
        for (const w of waiters.filter((w) => tokens >= w.n)) w.resolve()
        return relay.token(userId)
      },
    })
    try {
      const details = await statusWhere(a, (status) => status === 'error')
      expect(details.reason).toBe('unreachable')
      expect(details.message).toMatch(/cannot be reached \(3 attempts in a row/)
      await tokensReached(6) // retries go on, the status stays put, the app is told once
      expect(a.sync.details('p')).toMatchObject({ status: 'error', reason: 'unreachable' })
      expect(a.errors).toHaveLength(1)
      expect((a.errors[0] as { code?: string }).code).toBe('internal')

      // The device going offline is a different status, without a reason.
      network.dispatchEvent(new Event('offline'))
      expect(a.sync.details('p')).toMatchObject({ status: 'offline' })
      expect(a.sync.details('p').reason).toBeUndefined()

      relayState.state.down = false
      network.dispatchEvent(new Event('online'))
      await a.sync.whenSynced('p')
      expect(a.sync.details('p')).toMatchObject({ status: 'synced' })
    } finally {
      await closeAll([a])
    }
  }, 60_000)
})
