import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import * as Y from 'yjs'
import { connectClient, runCli, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { openMux, syncFrame } from './mux-client.js'
import { startBalancer } from './tcp-balancer.js'
import type { Balancer } from './tcp-balancer.js'
import { startPostgres, startRedis } from './services.js'
import type { Service } from './services.js'
import { CloseCode } from '@engram/sync/close-codes'
import { openPostgresStore } from '../src/storage/persistence-postgres.js'
import { silentLogger } from '../src/log.js'
import { mergeUpdates } from '../src/rooms/merge-updates.js'

let postgres: Service
let redis: Service
const relays: RelayProcess[] = []
const clients: Client[] = []
const balancers: Balancer[] = []
beforeAll(async () => {
  ;[postgres, redis] = await Promise.all([startPostgres(), startRedis()])
}, 60_000)
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy()
  for (const b of balancers.splice(0)) await b.close()
  for (const r of relays.splice(0)) await r.stop('SIGKILL')
})
afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()])
})

const instance = async (id: string, args: string[] = []): Promise<RelayProcess> => {
  const r = await startRelay({ args: ['--store', 'postgres', '--postgres', postgres.url, '--redis', redis.url, '--instance-id', id, ...args] })
  relays.push(r)
  return r
}
const connect = (target: { wsUrl: string }, room: string, token: string): Client => {
  const c = connectClient(target as RelayProcess, room, token)
  clients.push(c)
  return c
}
const entries = (c: Client, name = 'log'): string[] => c.doc.getArray<string>(name).toArray()

describe('several instances on PostgreSQL and Redis', () => {
  it('converges stock clients of one room on different instances, awareness included', async () => {
    const [a, b] = await Promise.all([instance('conv-a'), instance('conv-b')])
    const token = await tokenFor('multi')
    const onA = connect(a, 'multi/room', token)
    const onB = connect(b, 'multi/room', token)
    await Promise.all([onA.synced, onB.synced])
    for (let i = 0; i < 20; i++) {
      onA.doc.getArray<string>('log').push([`a${i}`])
      onB.doc.getArray<string>('log').push([`b${i}`])
    }
    await waitFor(() => entries(onA).length === 40 && entries(onB).length === 40, 10_000, 'both sides to have 40 entries')
    expect(entries(onA)).toEqual(entries(onB))
    onA.provider.awareness.setLocalStateField('user', 'ann')
    await waitFor(() => onB.provider.awareness.getStates().get(onA.doc.clientID)?.user === 'ann', 5000, 'awareness across instances')
    const late = connect(b, 'multi/room', token)
    await late.synced
    await waitFor(() => entries(late).length === 40, 5000, 'a late joiner on the other instance')
    expect((await scrape(b)).get('engram_relay_fanout_received_total')).toBeGreaterThan(0)
  })

  it('loses nothing a client has seen when an instance is killed mid-traffic; its clients reconnect to the other', async () => {
    const [a, b] = await Promise.all([instance('kill-a'), instance('kill-b')])
    const token = await tokenFor('kill')
    // Direct: a writer on the instance that dies, a reader on the one that stays.
    const writer = connect(a, 'kill/room', token)
    const reader = connect(b, 'kill/room', token)
    // Through the balancer: a writer that must move to the surviving instance.
    const lb = await startBalancer([a.port, b.port])
    balancers.push(lb)
    let mover = connect(lb, 'kill/room', token)
    await Promise.all([writer.synced, reader.synced, mover.synced])
    if ((await scrape(a)).get('engram_relay_connections') !== 2) {
      // The balancer sent it to b: reconnect once so it lands on a.
      mover.destroy()
      mover = connect(lb, 'kill/room', token)
      await mover.synced
    }
    expect((await scrape(a)).get('engram_relay_connections')).toBe(2)

    let killed = false
    let seenAtKill: string[] = []
    const traffic = (async () => {
      for (let i = 0; i < 200; i++) {
        if (!killed) writer.doc.getArray<string>('log').push([`w${i}`])
        mover.doc.getArray<string>('log').push([`m${i}`])
        if (i === 100) {
          await waitFor(() => entries(reader).filter((e) => e.startsWith('w')).length >= 50, 10_000, 'the reader to see the writer')
          // The writer dies with the instance: only the store can bring back what the reader saw.
          seenAtKill = entries(reader)
          killed = true
          writer.destroy()
          reader.destroy()
          await a.stop('SIGKILL')
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    await traffic
    expect(seenAtKill.length).toBeGreaterThan(0)
    // The mover reconnects through the balancer to b and its edits get there.
    const check = connect(b, 'kill/room', token)
    await check.synced
    await waitFor(() => entries(check).filter((e) => e.startsWith('m')).length === 200, 20_000, 'every edit of the moved client')
    // Everything the reader had seen before the kill is in PostgreSQL: a fresh instance serves it.
    const c = await instance('kill-c')
    const fresh = connect(c, 'kill/room', token)
    await fresh.synced
    const stored = new Set(entries(fresh))
    expect(seenAtKill.filter((e) => !stored.has(e))).toEqual([])
  }, 60_000)

  it('resubscribes after Redis restarts and brings the other instance up to date', async () => {
    const [a, b] = await Promise.all([instance('redis-a'), instance('redis-b')])
    const token = await tokenFor('rds')
    const onA = connect(a, 'rds/room', token)
    const onB = connect(b, 'rds/room', token)
    await Promise.all([onA.synced, onB.synced])
    onA.doc.getArray<string>('log').push(['before'])
    await waitFor(() => entries(onB).length === 1, 5000, 'the first entry across')
    await redis.stop('SIGKILL')
    for (let i = 0; i < 10; i++) onA.doc.getArray<string>('log').push([`during${i}`])
    await redis.start()
    await waitFor(() => entries(onB).length === 11, 15_000, 'the entries written while Redis was away')
    onA.doc.getArray<string>('log').push(['after'])
    await waitFor(() => entries(onB).length === 12, 5000, 'live fan-out again')
    // The clients never noticed more than a delay.
    expect(onA.provider.wsconnected && onB.provider.wsconnected).toBe(true)
    expect((await scrape(b)).get('engram_relay_fanout_resyncs_total')).toBeGreaterThanOrEqual(1)
  }, 60_000)

  it('starts and serves its own clients while Redis is away, and shuts down cleanly', async () => {
    await redis.stop()
    try {
      const a = await instance('noredis-a')
      const token = await tokenFor('nrd')
      const one = connect(a, 'nrd/room', token)
      const two = connect(a, 'nrd/room', token)
      await Promise.all([one.synced, two.synced])
      one.doc.getArray<string>('log').push(['local'])
      await waitFor(() => entries(two).length === 1, 5000, 'local fan-out without Redis')
      expect((await scrape(a)).get('engram_relay_fanout_connected')).toBe(0)
      expect(await a.stop('SIGTERM')).toBe(0)
    } finally {
      await redis.start()
    }
  })

  it('refuses writes with 4504 while PostgreSQL is down, loses nothing acknowledged, and resumes when it is back', async () => {
    const a = await instance('pgdown-a')
    const token = await tokenFor('pgd')
    const writer = connect(a, 'pgd/room', token)
    const reader = connect(a, 'pgd/room', token)
    await Promise.all([writer.synced, reader.synced])
    for (let i = 0; i < 10; i++) writer.doc.getArray<string>('log').push([`ok${i}`])
    await waitFor(() => entries(reader).length === 10, 5000, 'acknowledged entries')
    await postgres.stop()
    writer.doc.getArray<string>('log').push(['while-down'])
    expect(await writer.firstClose).toBe(CloseCode.storeUnavailable)
    // 45xx: the stock client keeps retrying, and each attempt is refused while the store is away.
    expect(writer.provider.shouldConnect).toBe(true)
    const attempt = connect(a, 'pgd/other', token)
    expect(await attempt.firstClose).toBe(CloseCode.storeUnavailable)
    await postgres.start()
    await waitFor(() => writer.provider.wsconnected && writer.provider.synced, 20_000, 'the writer to reconnect')
    const fresh = connect(a, 'pgd/room', token)
    await fresh.synced
    await waitFor(() => entries(fresh).length === 11, 10_000, 'the write made during the outage')
    expect(entries(fresh).slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `ok${i}`))
  }, 60_000)
})

describe('the multiplexed socket across instances', () => {
  it('a document written over /mux on one instance reaches a stock client on the other; its drop closes that client (4411) and empties the room everywhere', async () => {
    const [a, b] = await Promise.all([instance('mux-a'), instance('mux-b')])
    const token = await tokenFor('mxi')
    const mux = await openMux(a, token)
    try {
      mux.send({ type: 'open', room: 'mxi/doc' })
      await mux.next((f) => f.type === 'message' && f.room === 'mxi/doc')
      const doc = new Y.Doc()
      doc.getArray<string>('log').push(['over the shared socket'])
      mux.send({ type: 'message', room: 'mxi/doc', message: syncFrame(2, Y.encodeStateAsUpdate(doc)) })
      const onB = connect(b, 'mxi/doc', token)
      await waitFor(() => entries(onB).length === 1, 10_000, 'the stock client on b to see the write')
      mux.send({ type: 'close', room: 'mxi/doc' })
      mux.send({ type: 'drop', room: 'mxi/doc' })
      expect(await mux.next((f) => f.type === 'dropped')).toMatchObject({ room: 'mxi/doc', code: 0 })
      expect(await onB.firstClose).toBe(CloseCode.documentDropped)
      const fresh = connect(b, 'mxi/doc', token)
      await fresh.synced
      expect(entries(fresh)).toEqual([])
    } finally {
      mux.ws.close()
    }
  })
})

describe('revocation across instances', () => {
  it("closes the user's connections on every instance after `engram-relay revoke` with --redis", async () => {
    const [a, b] = await Promise.all([instance('rev-a'), instance('rev-b')])
    const token = await tokenFor('revm')
    const onA = connect(a, 'revm/room', token)
    const onB = connect(b, 'revm/other', token)
    const bystander = connect(b, 'keep/room', await tokenFor('keep'))
    await Promise.all([onA.synced, onB.synced, bystander.synced])
    const result = await runCli(['revoke', '--user', 'revm', '--store', 'postgres', '--postgres', postgres.url, '--redis', redis.url])
    expect(result).toMatchObject({ code: 0 })
    expect(await onA.firstClose).toBe(CloseCode.tokenRevoked)
    expect(await onB.firstClose).toBe(CloseCode.tokenRevoked)
    expect(await connect(b, 'revm/room', token).firstClose).toBe(CloseCode.tokenRevoked)
    expect(bystander.provider.wsconnected).toBe(true)
  })
})

describe('compaction lock', () => {
  it('skips a room another instance is compacting', async () => {
    const store = await openPostgresStore({ url: postgres.url, log: silentLogger })
    const doc = new Y.Doc()
    const updates: Uint8Array[] = []
    doc.on('update', (u: Uint8Array) => {
      updates.push(u)
    })
    for (let i = 0; i < 5; i++) doc.getArray('a').push([i])
    await store.appendMany(updates.map((update) => ({ room: 'lock/room', update })))
    const holder = new pg.Client({ connectionString: postgres.url })
    await holder.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [0x456e6772, 'lock/room'])
      expect(await store.compact('lock/room', mergeUpdates)).toBeNull()
      await holder.query('COMMIT')
      expect(await store.compact('lock/room', mergeUpdates)).toMatchObject({ rows: 1 })
      const after = new Y.Doc()
      for (const u of (await store.load('lock/room')).updates) Y.applyUpdate(after, u)
      expect(after.getArray('a').toArray()).toEqual([0, 1, 2, 3, 4])
    } finally {
      await holder.end()
      await store.close()
    }
  })
})
