import 'fake-indexeddb/auto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import type { SyncDetails } from '@engram/sync'
import { closeAll, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'
import { decidingCheck } from './key-check.js'

let relay: TestRelay
beforeAll(async () => {
  relay = await startTestRelay()
}, 60_000)
afterAll(async () => {
  await relay?.stop()
})

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])

function settledStatus(replica: Replica): Promise<SyncDetails> {
  return new Promise((resolve) => {
    const done = (details: SyncDetails): boolean => details.status === 'error' || details.status === 'synced'
    if (done(replica.sync.details('p'))) return resolve(replica.sync.details('p'))
    const off = replica.sync.onStatus((projectId, _status, details) => {
      if (projectId === 'p' && done(details)) {
        off()
        resolve(details)
      }
    })
  })
}

function errorStatus(replica: Replica): Promise<SyncDetails> {
  return new Promise((resolve) => {
    if (replica.sync.status('p') === 'error') return resolve(replica.sync.details('p'))
    const off = replica.sync.onStatus((projectId, status, details) => {
      if (projectId === 'p' && status === 'error') {
        off()
        resolve(details)
      }
    })
  })
}

/** The project document as the relay serves it. */
async function relayDoc(userId: string): Promise<Y.Doc> {
  const doc = new Y.Doc()
  const provider = new WebsocketProvider(relay.url, `${userId}/p`, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    params: { token: await relay.token(userId) },
    disableBc: true,
  })
  await new Promise<void>((resolve) => (provider.synced ? resolve() : provider.once('sync', () => resolve())))
  provider.destroy()
  return doc
}

describe('two new devices set up one encrypted project at once with different keys', () => {
  it.each([1, 2, 3])(
    'the earliest key check decides on both devices; the other refuses and says what to do (round %i)',
    async (round) => {
      const userId = `u-race-${round}`
      const options = async (name: string) =>
        openReplica(name, undefined, {
          userId,
          url: relay.url,
          WebSocket,
          network: null,
          token: () => relay.token(userId),
          encryption: { key: await newKey() },
          projectSync: false,
        })
      const a = await options('a')
      const b = await options('b')
      try {
        await a.memory.facts.set('p', 'from-a', 'secret a')
        await b.memory.facts.set('p', 'from-b', 'secret b')
        // first sync of both at once
        await Promise.all([a.memory.projects.update('p', { sync: { enabled: true } }), b.memory.projects.update('p', { sync: { enabled: true } })])
        const loser = await Promise.race([errorStatus(a).then(() => a), errorStatus(b).then(() => b)])
        const winner = loser === a ? b : a
        const won = await settledStatus(winner)
        expect(won.status).toBe('synced')
        const lost = loser.sync.details('p')
        expect(lost.reason).toBe('key_mismatch')
        expect(lost.message).toMatch(/another key \(set up by device \w+ on .+\).*same passphrase or key as your other devices and start sync again/)
        expect(lost.message).toContain(winner.memory.deviceId)
        // deterministic: the check that decides in the relay's document is the winner's
        const doc = await relayDoc(userId)
        expect(decidingCheck(doc)?.device).toBe(winner.memory.deviceId)
        // the winner never shows an error: values the loser may have sealed meanwhile are set aside, not fatal
        for (const error of winner.errors) expect(String((error as Error).message)).toMatch(/^Set aside /)
        expect(await winner.memory.facts.get('p', loser === a ? 'from-a' : 'from-b')).toBeUndefined()
        expect(loser.errors.map((e) => (e as { code?: string }).code)).toContain('crypto')
      } finally {
        await closeAll([a, b])
      }
    },
    60_000,
  )
})
