import { replicationOf } from '@engram/core/internal'
import 'fake-indexeddb/auto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import { startSync } from '@engram/sync'
import { closeAll, mirroredState, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'

let relay: TestRelay
beforeAll(async () => {
  relay = await startTestRelay()
}, 60_000)
afterAll(async () => {
  await relay?.stop()
})

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** A `ws` WebSocket whose network can be pulled: while `down`, connections fail and open ones drop. */
function flakyWebSocket() {
  const sockets = new Set<WebSocket>()
  const state = { down: false }
  class FlakyWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(state.down ? 'ws://127.0.0.1:9/' : url, protocols)
      sockets.add(this)
      this.on('close', () => sockets.delete(this))
    }
  }
  return {
    WebSocket: FlakyWebSocket,
    down() {
      state.down = true
      for (const s of sockets) s.terminate()
    },
    up() {
      state.down = false
    },
  }
}

/** A `ws` WebSocket whose open sockets can be muted: they stay open, but nothing arrives or leaves. */
function silentWebSocket() {
  const sockets = new Set<MutableSocket>()
  class MutableSocket extends WebSocket {
    muted = false
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols)
      sockets.add(this)
      this.on('close', () => sockets.delete(this))
      const send = this.send.bind(this) as (...args: unknown[]) => void
      this.send = ((...args: unknown[]) => {
        if (!this.muted) send(...args)
      }) as WebSocket['send']
      const handler = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage')!
      Object.defineProperty(this, 'onmessage', {
        configurable: true,
        get: () => handler.get!.call(this),
        set: (listener: ((event: unknown) => void) | null) =>
          handler.set!.call(
            this,
            listener &&
              ((event: unknown) => {
                if (!this.muted) listener(event)
              }),
          ),
      })
    }
  }
  return {
    WebSocket: MutableSocket,
    muteOpenSockets() {
      for (const s of sockets) s.muted = true
    },
  }
}

describe('sync through the real relay on 127.0.0.1', () => {
  it('two stores converge, one goes offline, both edit, it comes back and both converge', async () => {
    const userId = 'u-relay'
    const flaky = flakyWebSocket()
    let tokens = 0
    const token = () => {
      tokens++
      return relay.token(userId)
    }
    const a: Replica = await openReplica('a', undefined, { userId, url: relay.url, token, WebSocket: flaky.WebSocket, backoff: { initialMs: 40, maxMs: 200 } })
    const b: Replica = await openReplica('b', undefined, {
      userId,
      url: relay.url,
      token: () => relay.token(userId),
      WebSocket,
      start: Date.UTC(2026, 0, 1) + 5,
    })
    try {
      await Promise.all([a.sync.whenSynced('p'), b.sync.whenSynced('p')])
      await a.memory.facts.set('p', 'greeting', 'hello')
      await b.memory.blocks.set('p', 'persona', 'calm')
      await until(
        async () => (await b.memory.facts.get('p', 'greeting'))?.value === 'hello' && (await a.memory.blocks.get('p', 'persona')) !== undefined,
        'first exchange',
      )

      const tokensBefore = tokens
      flaky.down()
      await until(async () => a.sync.status('p') === 'offline', 'a offline')
      await a.memory.facts.set('p', 'greeting', 'hello from a (older)')
      await a.memory.facts.set('p', 'only-a', 1)
      b.clock.advance(1000)
      await b.memory.facts.set('p', 'greeting', 'hello from b (newer)')
      await b.memory.facts.delete('p', 'only-a') // nothing to delete on b yet: a no-op
      await b.memory.facts.set('p', 'only-b', 2)
      flaky.up()
      await a.sync.whenSynced('p')
      expect(tokens).toBeGreaterThan(tokensBefore) // a fresh token for the reconnect
      await until(async () => isDeepStrictEqual(await mirroredState(a), await mirroredState(b)), 'convergence')
      expect((await a.memory.facts.get('p', 'greeting'))?.value).toBe('hello from b (newer)')
      expect((await b.memory.facts.get('p', 'only-a'))?.value).toBe(1)
      expect((await a.memory.facts.get('p', 'only-b'))?.value).toBe(2)
      await until(async () => (await replicationOf(a.memory).pending()).length === 0, 'outbox drained')
      // The outage is deliberate: a's report that the relay could not be reached (on a slow machine the backoff
      // reaches its third attempt while a is offline) is right; nothing else may be reported.
      expect(a.errors.filter((e) => !/cannot be reached/.test(String((e as Error).message)))).toEqual([])
      expect(b.errors).toEqual([])
    } finally {
      await closeAll([a, b])
    }
  }, 60_000)

  it('goes offline on the offline event and reconnects at once on online, with a fresh token and no backoff', async () => {
    const userId = 'u-events'
    const network = new EventTarget()
    let tokens = 0
    const token = () => {
      tokens++
      return relay.token(userId)
    }
    // A backoff of a minute: only the online event can bring the device back within the test.
    const a = await openReplica('a', undefined, { userId, url: relay.url, token, WebSocket, network, backoff: { initialMs: 60_000, maxMs: 60_000 } })
    const b = await openReplica('b', undefined, {
      userId,
      url: relay.url,
      token: () => relay.token(userId),
      WebSocket,
      network: null,
      start: Date.UTC(2026, 0, 1) + 5,
    })
    try {
      await Promise.all([a.sync.whenSynced('p'), b.sync.whenSynced('p')])
      const seen: string[] = []
      a.sync.onStatus((_, status) => seen.push(status))
      network.dispatchEvent(new Event('offline'))
      expect(a.sync.status('p')).toBe('offline')
      const tokensWhileOffline = tokens
      await b.memory.facts.set('p', 'sent-while-a-offline', 1)
      await new Promise((r) => setTimeout(r, 300))
      expect(await a.memory.facts.get('p', 'sent-while-a-offline')).toBeUndefined() // really disconnected
      expect(tokens).toBe(tokensWhileOffline) // and not retrying
      network.dispatchEvent(new Event('online'))
      const t0 = Date.now()
      await a.sync.whenSynced('p')
      expect(Date.now() - t0).toBeLessThan(5_000)
      expect(tokens).toBe(tokensWhileOffline + 1)
      await until(async () => (await a.memory.facts.get('p', 'sent-while-a-offline'))?.value === 1, 'catch-up after online')
      expect(seen).toEqual(['offline', 'connecting', 'synced'])
      expect(a.errors).toEqual([])
    } finally {
      await closeAll([a, b])
    }
  }, 30_000)

  it('notices a socket that stays open but carries nothing (heartbeat) and reconnects', async () => {
    const userId = 'u-silent'
    const silent = silentWebSocket()
    const a = await openReplica('a', undefined, {
      userId,
      url: relay.url,
      token: () => relay.token(userId),
      WebSocket: silent.WebSocket,
      network: null,
      heartbeatMs: 100,
      backoff: { initialMs: 20, maxMs: 50 },
    })
    try {
      await a.sync.whenSynced('p')
      const seen: string[] = []
      a.sync.onStatus((_, status) => seen.push(status))
      silent.muteOpenSockets()
      // Watch the reported transitions, not the current status: the reconnect can be quicker than a poll.
      await until(async () => seen.includes('offline'), 'offline after silence', 3_000)
      await until(async () => seen.lastIndexOf('synced') > seen.indexOf('offline'), 'synced on a fresh socket', 5_000)
      expect(seen.slice(0, 2)).toEqual(['offline', 'synced'])
    } finally {
      await closeAll([a])
    }
  }, 30_000)

  it('reports error for a room the token does not cover, and off after close', async () => {
    const m = await openReplica('c', undefined, { userId: 'u-other', url: relay.url, token: () => relay.token('someone-else'), WebSocket })
    try {
      await until(async () => m.sync.status('p') === 'error', 'status error')
      expect(String(m.errors[0])).toMatch(/4403/)
    } finally {
      await m.sync.close()
      expect(m.sync.status('p')).toBe('off')
      m.memory.close()
    }
  }, 30_000)

  it('startSync refuses a closed store', async () => {
    const m = await openReplica('d', undefined, { url: relay.url, token: () => relay.token('u1'), WebSocket })
    await m.sync.close()
    m.memory.close()
    expect(() => startSync(m.memory, { url: relay.url, token: () => relay.token('u1') })).toThrow(/closed/)
  })
})

/** Every byte the relay keeps on disk (its SQLite store with its WAL). */
function storedBytes(): Buffer {
  return Buffer.concat(readdirSync(relay.data).map((name) => readFileSync(join(relay.data, name))))
}

describe('end-to-end encryption through the real relay', () => {
  it('two devices with one passphrase converge; the relay stores no plaintext; a wrong key stays out', async () => {
    const userId = 'u-e2e'
    const SECRET = 'okapi-marmalade-4412'
    const opts = (name: string, passphrase: string, offset: number) =>
      openReplica(name, undefined, {
        userId,
        url: relay.url,
        token: () => relay.token(userId),
        WebSocket,
        network: null,
        encryption: { passphrase },
        start: Date.UTC(2026, 0, 1) + offset,
      })
    const a = await opts('a', 'tandem bicycle', 0)
    const b = await opts('b', 'tandem bicycle', 5)
    // control: a plain project of another user, whose value the relay stores in clear
    const plainUser = 'u-plain'
    const control = await openReplica('plain', undefined, { userId: plainUser, url: relay.url, token: () => relay.token(plainUser), WebSocket, network: null })
    let wrong: Replica | undefined
    try {
      await Promise.all([a.sync.whenSynced('p'), b.sync.whenSynced('p'), control.sync.whenSynced('p')])
      await a.memory.facts.set('p', 'code', SECRET)
      await b.memory.blocks.set('p', 'persona', `calm ${SECRET}`)
      await control.memory.facts.set('p', 'code', 'clear-control-9931')
      await until(
        async () => (await b.memory.facts.get('p', 'code'))?.value === SECRET && (await a.memory.blocks.get('p', 'persona')) !== undefined,
        'encrypted exchange',
      )
      b.clock.advance(100)
      await b.memory.facts.set('p', 'code', `${SECRET} v2`)
      await until(async () => (await a.memory.facts.get('p', 'code'))?.value === `${SECRET} v2`, 'encrypted overwrite')
      await until(async () => isDeepStrictEqual(await mirroredState(a), await mirroredState(b)), 'convergence')

      // what the relay stores and serves: ciphertext only (the control proves the scan reads stored documents)
      await until(async () => storedBytes().includes('clear-control-9931'), 'the relay stored the control document')
      await until(async () => storedBytes().includes('p/code'), 'the relay stored the encrypted document')
      expect(storedBytes().includes(SECRET)).toBe(false)
      const stock = new Y.Doc()
      const provider = new WebsocketProvider(relay.url, `${userId}/p`, stock, {
        WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
        params: { token: await relay.token(userId) },
        disableBc: true,
      })
      await new Promise<void>((r) => (provider.synced ? r() : provider.once('sync', () => r())))
      const served = Buffer.from(Y.encodeStateAsUpdate(stock))
      provider.destroy()
      expect(served.includes('p/code')).toBe(true)
      expect(served.includes(SECRET)).toBe(false)

      wrong = await opts('c', 'wrong passphrase', 10_000)
      await wrong.memory.facts.set('p', 'code', 'from the wrong key')
      await until(async () => wrong!.sync.status('p') === 'error', 'wrong key refused')
      expect(wrong.errors.map((e) => (e as { code?: string }).code)).toEqual(['crypto'])
      expect(await wrong.memory.facts.get('p', 'persona')).toBeUndefined()
      await new Promise((r) => setTimeout(r, 200))
      expect((await a.memory.facts.get('p', 'code'))?.value).toBe(`${SECRET} v2`)
      expect(a.errors).toEqual([])
      expect(b.errors).toEqual([])
    } finally {
      await closeAll([a, b, control, ...(wrong ? [wrong] : [])])
    }
  }, 60_000)
})
