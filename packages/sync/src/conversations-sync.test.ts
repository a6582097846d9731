import { afterEach, describe, expect, it } from 'vitest'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, type SyncOptions } from '@engram/sync'
import { closeAll, openReplica, settle, type Replica } from '../test/replicas.js'

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

/** Two devices whose project `p` syncs its conversations. */
async function pair(options: Partial<SyncOptions> = {}) {
  const network = createLoopbackNetwork()
  const a = await openReplica('a', network, options)
  const b = await openReplica('b', network, options)
  open.push(a, b)
  for (const r of [a, b]) await r.memory.projects.setSync('p', { messages: true })
  await settle(network, [a, b])
  return { network, a, b }
}

const contents = async (r: Replica, sessionId: string): Promise<string[]> => (await r.memory.messages.tail(sessionId, 1000)).map((m) => m.content)

const variants: Array<[string, () => Promise<Partial<SyncOptions>>]> = [
  ['in clear', async () => ({})],
  ['encrypted', async () => ({ encryption: { key: await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) } })],
]

describe.each(variants)('conversations sync (%s)', (_variant, options) => {
  it('a chat started on one device continues on the other, in one order, each message once', async () => {
    const { network, a, b } = await pair(await options())
    const s = await a.memory.sessions.create('p', { title: 'Bicycles' })
    await a.memory.messages.appendExchange(s.id, 'Where is my bicycle?', 'Behind the library.')
    await settle(network, [a, b])
    expect(await b.memory.sessions.get(s.id)).toMatchObject({ title: 'Bicycles' })
    expect(await contents(b, s.id)).toEqual(['Where is my bicycle?', 'Behind the library.'])
    expect((await b.memory.search('p', 'bicycle')).some((h) => h.kind === 'message')).toBe(true)
    await b.memory.messages.append(s.id, { role: 'user', content: 'And the lock code?' })
    await settle(network, [a, b])
    expect(await contents(a, s.id)).toEqual(['Where is my bicycle?', 'Behind the library.', 'And the lock code?'])
    // The project document holds the session, never its messages.
    const projectDoc = await replicationOf(a.memory).snapshot('p')
    expect(projectDoc.records.map((r) => r.kind)).toEqual(['sessions'])
  })

  it('devices that append while offline keep every message and agree on the order afterwards', async () => {
    const { network, a, b } = await pair(await options())
    const s = await a.memory.sessions.create('p')
    await settle(network, [a, b])
    network.disconnect('a')
    network.disconnect('b')
    for (let i = 0; i < 3; i++) {
      await a.memory.messages.append(s.id, { role: 'user', content: `a${i}` })
      a.clock.advance(3)
      await b.memory.messages.append(s.id, { role: 'assistant', content: `b${i}` })
      b.clock.advance(2)
    }
    await a.reopen()
    network.reconnect('a')
    network.reconnect('b')
    await settle(network, [a, b])
    const order = await contents(a, s.id)
    expect([...order].sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2'])
    expect(await contents(b, s.id)).toEqual(order)
    for (const r of [a, b]) expect((await r.memory.messages.tail(s.id, 10)).map((m) => m.seq).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6])
  })
})

describe('conversations sync', () => {
  it('are off by default: sessions and messages stay on the device', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('a', network)
    const b = await openReplica('b', network)
    open.push(a, b)
    const s = await a.memory.sessions.create('p')
    await a.memory.messages.append(s.id, { role: 'user', content: 'private' })
    await a.memory.facts.set('p', 'marker', 1)
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'marker'))?.value).toBe(1)
    expect(await b.memory.sessions.get(s.id)).toBeUndefined()
  })

  it('loads the most recent sessions eagerly and any other one on openSession', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('a', network)
    const b = await openReplica('b', network, { sessions: { eager: 1 } })
    open.push(a, b)
    for (const r of [a, b]) await r.memory.projects.setSync('p', { messages: true })
    const old = await a.memory.sessions.create('p', { title: 'old' })
    await a.memory.messages.append(old.id, { role: 'user', content: 'from long ago' })
    a.clock.advance(1000)
    const recent = await a.memory.sessions.create('p', { title: 'recent' })
    await a.memory.messages.append(recent.id, { role: 'user', content: 'just now' })
    await settle(network, [a, b])
    expect((await b.memory.sessions.list('p')).items.map((s) => s.title)).toEqual(['recent', 'old'])
    expect(await contents(b, recent.id)).toEqual(['just now'])
    expect(await contents(b, old.id)).toEqual([])
    // The store's own handle reaches the running engine (the same call works through a worker).
    await b.memory.sync.openSession('p', old.id)
    await settle(network, [a, b])
    expect(await contents(b, old.id)).toEqual(['from long ago'])
    await expect(b.sync.openSession('nope', old.id)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(b.memory.sync.openSession('p', '')).rejects.toMatchObject({ code: 'invalid_input' })
    await b.sync.close()
    await expect(b.memory.sync.openSession('p', old.id)).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('a purged session is purged on every device, its messages with it', async () => {
    const { network, a, b } = await pair()
    const s = await a.memory.sessions.create('p')
    await a.memory.messages.append(s.id, { role: 'user', content: 'a secret plan' })
    await settle(network, [a, b])
    expect(await contents(b, s.id)).toEqual(['a secret plan'])
    await b.memory.sessions.purge(s.id)
    await settle(network, [a, b])
    expect(await a.memory.sessions.get(s.id)).toBeUndefined()
    expect(await a.memory.search('p', 'secret')).toEqual([])
    // A late append from a third device's view: the session is gone, nothing comes back.
    await expect(a.memory.messages.append(s.id, { role: 'user', content: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    expect((await replicationOf(a.memory).snapshot('p', { doc: s.id })).records).toEqual([])
  })
})

describe('conversations sync while it stops', () => {
  it('sync closed (and the store with it) while it refreshes its session documents reports nothing: work in flight ends first', async () => {
    const { network, a, b } = await pair()
    const s = await a.memory.sessions.create('p')
    await settle(network, [a, b])
    network.disconnect('a')
    await a.restart()
    await network.whenConnected()
    await a.memory.messages.append(s.id, { role: 'user', content: 'written offline' })
    await a.reopen() // closes sync, then the store, while the restarted sync's refresh of session documents runs
    network.reconnect('a')
    await settle(network, [a, b])
    expect(a.errors).toEqual([])
    expect(await contents(b, s.id)).toEqual(['written offline'])
  })
})
