import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { createMemory, knowledgeModule, type Memory, openMemory } from '@engram/core'
import { createLoopbackNetwork, startSync } from '@engram/sync'
import { startTestRelay, type TestRelay } from '../packages/sync/test/relay.js'
import { settle, track } from './support/loopback-sync.js'

/*
 * The Dana example end to end through the real sync engine (Yjs documents over the in-process
 * loopback network, then through the real relay process on 127.0.0.1 over WebSockets): two
 * devices of one user, both offline, each learns one of Dana's jobs; once they reconnect both
 * hold the same windows — as of May she worked at Acme, now at Initech.
 */
const MARCH = Date.UTC(2026, 2, 1)
const MAY = Date.UTC(2026, 4, 1)
const JUNE = Date.UTC(2026, 5, 1)
const JULY = Date.UTC(2026, 6, 1)

let counter = 0
describe('knowledge across devices', () => {
  it('two offline devices each learn one of Dana’s jobs and converge: as of May Acme, now Initech', async () => {
    const network = createLoopbackNetwork()
    const user = `k${++counter}`
    const device = (now: () => number) => ({ appId: 'knowledge-sync', userId: user, indexedDB: new IDBFactory(), IDBKeyRange, now })
    // Laptop: the whole store; phone: knowledge only, its clock an hour behind.
    const laptop: Memory = track(await openMemory(device(() => JULY)))
    const phone = track(await createMemory({ ...device(() => JULY - 3_600_000), modules: [knowledgeModule()] }))
    for (const m of [laptop, phone]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const syncs = [laptop, phone].map((m, i) =>
      track(startSync(m, { connect: network.connector(`d${i}`), docName: (p) => `knowledge-${counter}:d${i}:${p}`, onError: () => {} })),
    )
    await Promise.all([laptop, phone].map((m) => m.sync.whenSynced('p')))

    network.disconnect('d0')
    network.disconnect('d1')
    // Each device names Dana on its own: the same name is one entity everywhere.
    const onLaptop = await laptop.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Met at the climbing gym'] })
    const acme = await laptop.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    await laptop.relations.add('p', { subject: onLaptop.id, predicate: 'works_at', object: acme.id, validFrom: MARCH, provenance: { source: 'laptop chat' } })
    const onPhone = await phone.entities.upsert('p', { name: 'dana', type: 'Person' })
    const initech = await phone.entities.upsert('p', { name: 'Initech', type: 'organisation' })
    await phone.relations.add('p', { subject: onPhone.id, predicate: 'works at', object: initech.id, validFrom: JUNE, provenance: { source: 'phone chat' } })
    expect(onPhone.id).toBe(onLaptop.id)
    // Offline, each knows only its own job.
    expect((await laptop.relations.current('p', onLaptop.id)).map((r) => r.object)).toEqual([acme.id])
    expect((await phone.relations.current('p', onPhone.id)).map((r) => r.object)).toEqual([initech.id])

    network.reconnect('d0')
    network.reconnect('d1')
    await settle(network, syncs)

    for (const m of [laptop, phone]) {
      const dana = await m.entities.resolve('p', 'DANA')
      expect(dana?.id).toBe(onLaptop.id)
      expect((await m.relations.asOf('p', dana!.id, MAY, { predicate: 'works_at' })).map((r) => r.object)).toEqual([acme.id])
      expect((await m.relations.current('p', dana!.id, { predicate: 'works_at' })).map((r) => r.object)).toEqual([initech.id])
    }
    const windows = async (m: Pick<Memory, 'relations'>) =>
      (await m.relations.history('p', onLaptop.id, 'works_at')).map((r) => [r.object, r.validFrom, r.validTo, r.provenance?.source])
    expect(await windows(laptop)).toEqual([
      [acme.id, MARCH, JUNE, 'laptop chat'],
      [initech.id, JUNE, undefined, 'phone chat'],
    ])
    expect(await windows(phone)).toEqual(await windows(laptop))
    // The laptop's search finds the relation the phone wrote, in words.
    expect((await laptop.search('p', 'initech', { kinds: ['relation'] })).map((h) => h.text)).toEqual(['Dana works at Initech'])
  })
})

describe('knowledge across devices, through the real relay', () => {
  let relay: TestRelay
  beforeAll(async () => {
    relay = await startTestRelay()
  }, 60_000)
  afterAll(async () => {
    await relay?.stop()
  })

  it('two devices that learned one job each while never connected converge once they sync', async () => {
    const user = `kr${++counter}-${Date.now().toString(36)}`
    const open = (now: number) => openMemory({ appId: 'knowledge-relay', userId: user, indexedDB: new IDBFactory(), IDBKeyRange, now: () => now })
    const [laptop, phone] = [track(await open(JULY)), track(await open(JULY + 60_000))]
    for (const m of [laptop, phone]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const learn = async (m: Memory, org: string, validFrom: number) => {
      const dana = await m.entities.upsert('p', { name: 'Dana', type: 'person' })
      const o = await m.entities.upsert('p', { name: org, type: 'organisation' })
      await m.relations.add('p', { subject: dana.id, predicate: 'works_at', object: o.id, validFrom })
      return dana.id
    }
    const dana = await learn(laptop, 'Acme', MARCH)
    expect(await learn(phone, 'Initech', JUNE)).toBe(dana)
    for (const m of [laptop, phone]) track(startSync(m, { url: relay.url, token: () => relay.token(user), WebSocket, network: null, onError: () => {} }))
    await Promise.all([laptop, phone].map((m) => m.sync.whenSynced('p')))
    const windows = async (m: Memory) => (await m.relations.history('p', dana, 'works_at')).map((r) => [r.validFrom, r.validTo])
    for (const m of [laptop, phone])
      await expect
        .poll(() => windows(m), { timeout: 15_000 })
        .toEqual([
          [MARCH, JUNE],
          [JUNE, undefined],
        ])
    for (const m of [laptop, phone]) {
      const acme = await m.entities.resolve('p', 'acme')
      const initech = await m.entities.resolve('p', 'initech')
      expect((await m.relations.asOf('p', dana, MAY)).map((r) => r.object)).toEqual([acme!.id])
      expect((await m.relations.current('p', dana)).map((r) => r.object)).toEqual([initech!.id])
    }
  }, 60_000)
})
