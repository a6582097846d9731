import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { type Memory, openMemory } from '@engram/core'
import { createLoopbackNetwork, startSync } from '@engram/sync'
import { settle, track } from './support/loopback-sync.js'

/*
 * An entity's observations across two devices through the real sync engine (Yjs documents over
 * the loopback network): both offline, each adds its own observation to one entity, and both
 * end with both; an observation removed on one device and added again later on the other is
 * live on both, and removed on both when the removal came later.
 */
let counter = 0

async function twoDevices() {
  const network = createLoopbackNetwork()
  const user = `obs${++counter}`
  const clocks = [1_000_000, 1_000_000]
  const open = (i: number) => openMemory({ appId: 'entity-observations', userId: user, indexedDB: new IDBFactory(), IDBKeyRange, now: () => clocks[i]! })
  const devices: Memory[] = [track(await open(0)), track(await open(1))]
  for (const m of devices) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
  const syncs = devices.map((m, i) =>
    track(startSync(m, { connect: network.connector(`d${i}`), docName: (p) => `observations-${counter}:d${i}:${p}`, onError: () => {} })),
  )
  await Promise.all(devices.map((m) => m.sync.whenSynced('p')))
  return {
    devices,
    advance: (i: number, ms: number) => (clocks[i]! += ms),
    offline: () => {
      for (const d of ['d0', 'd1']) network.disconnect(d)
    },
    online: async () => {
      for (const d of ['d0', 'd1']) network.reconnect(d)
      await settle(network, syncs)
    },
    settle: () => settle(network, syncs),
  }
}

const observationsOf = async (m: Memory) => (await m.entities.resolve('p', 'Dana'))?.observations

describe('entity observations across devices', () => {
  it('two devices offline each add an observation: both survive on both, in the same order', async () => {
    const { devices, advance, offline, online, settle } = await twoDevices()
    const [laptop, phone] = devices as [Memory, Memory]
    const dana = await laptop.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Met at the gym'] })
    await settle()
    expect(await observationsOf(phone)).toEqual(['Met at the gym'])
    offline()
    advance(0, 10)
    await laptop.entities.addObservations('p', dana.id, ['Climbs on weekends'])
    advance(1, 20)
    await phone.entities.addObservations('p', dana.id, ['Drinks tea'])
    await online()
    const expected = ['Met at the gym', 'Climbs on weekends', 'Drinks tea']
    expect(await observationsOf(laptop)).toEqual(expected)
    expect(await observationsOf(phone)).toEqual(expected)
  })

  it('removed on one device and added again later on the other: live; the later removal wins the other way', async () => {
    const { devices, advance, offline, online, settle } = await twoDevices()
    const [laptop, phone] = devices as [Memory, Memory]
    const dana = await laptop.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Lives in Lisbon', 'Likes tea'] })
    await settle()
    offline()
    advance(0, 10)
    await laptop.entities.removeObservations('p', dana.id, ['Lives in Lisbon'])
    advance(1, 5)
    await phone.entities.removeObservations('p', dana.id, ['Lives in Lisbon'])
    advance(1, 20)
    await phone.entities.addObservations('p', dana.id, ['Lives in Lisbon'])
    await online()
    for (const m of devices) expect(await observationsOf(m)).toEqual(['Likes tea', 'Lives in Lisbon'])

    offline()
    advance(1, 10)
    await phone.entities.addObservations('p', dana.id, ['Likes chess'])
    advance(0, 100)
    await laptop.entities.removeObservations('p', dana.id, ['Likes tea'])
    await online()
    for (const m of devices) expect(await observationsOf(m)).toEqual(['Lives in Lisbon', 'Likes chess'])
  })
})
