import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterEach, describe, expect, it } from 'vitest'
import { conversationsModule, createMemory, factsModule, MemoryError, openMemory, type Memory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, startSync, type Sync } from '@engram/sync'
import { connectMemory, exposeMemory } from '@engram/worker'

/*
 * Sync across packages, as an app composes it: any store opened in this thread
 * syncs, whatever its modules; a store reached through a worker syncs inside the
 * worker, so startSync refuses it and says where sync runs instead.
 */
let counter = 0
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Two devices of one user: the same app and user, each its own database. */
const device = (userId: string) => ({ appId: 'composed-sync', userId, indexedDB: new IDBFactory(), IDBKeyRange })

function track<T extends { close(): Promise<void> }>(closable: T): T {
  cleanups.push(() => closable.close())
  return closable
}

describe('startSync with composed stores', () => {
  it('a store of the facts module alone syncs facts and blocks with a store of every module', async () => {
    const network = createLoopbackNetwork()
    const user = `u${++counter}`
    const small = track(await createMemory({ ...device(user), modules: [factsModule()] }))
    const full = track(await openMemory(device(user)))
    for (const m of [small, full]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const syncs = [small, full].map((m, i) =>
      track(startSync(m, { connect: network.connector(`r${i}`), docName: (p) => `composed-${counter}:r${i}:${p}`, onError: () => {} })),
    )
    await Promise.all([small, full].map((m) => m.sync.whenSynced('p')))
    await small.facts.set('p', 'city', 'Lisbon')
    await full.blocks.set('p', 'persona', 'brief and kind')
    for (let round = 0; round < 20; round++) {
      await Promise.all(syncs.map((s) => s.flush()))
      if ((await network.settle()) === 0) break
    }
    expect((await full.facts.get('p', 'city'))?.value).toBe('Lisbon')
    expect((await small.blocks.get('p', 'persona'))?.value).toBe('brief and kind')
    expect(await replicationOf(small).pending()).toEqual([])
  })

  it('a store without the facts module still syncs what it has (summaries)', async () => {
    const network = createLoopbackNetwork()
    const user = `u${++counter}`
    const talk = track(await createMemory({ ...device(user), modules: [conversationsModule()] }))
    const full = track(await openMemory(device(user)))
    for (const m of [talk, full]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const syncs = [talk, full].map((m, i) =>
      track(startSync(m, { connect: network.connector(`r${i}`), docName: (p) => `composed-${counter}:r${i}:${p}`, onError: () => {} })),
    )
    await Promise.all([talk, full].map((m) => m.sync.whenSynced('p')))
    const summary = await talk.summaries.create('p', { kind: 'project', text: 'A trip to Lisbon in May' })
    for (let round = 0; round < 20; round++) {
      await Promise.all(syncs.map((s) => s.flush()))
      if ((await network.settle()) === 0) break
    }
    expect(await full.summaries.latest('p')).toEqual(summary)
  })
})

describe('startSync with a store reached through a worker', () => {
  async function remote(): Promise<Memory> {
    const { port1, port2 } = new MessageChannel()
    const host = exposeMemory({ endpoint: port1, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
    cleanups.push(async () => host.close())
    return track(await connectMemory(port2, { appId: 'composed-sync', userId: `w${++counter}` }))
  }

  it('is refused with invalid_input naming the sync option of connectMemory, and changes nothing', async () => {
    const memory = await remote()
    const network = createLoopbackNetwork()
    let sync: Sync | undefined
    const error = await Promise.resolve()
      .then(() => {
        sync = startSync(memory, { connect: network.connector('w') })
      })
      .catch((e: unknown) => e)
    expect(sync).toBeUndefined()
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('connectMemory') })
    expect(() => replicationOf(memory)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(await memory.sync.status('user')).toBe('off')
    expect(await memory.sync.isLeader()).toBe(false)
    await memory.facts.set('user', 'still', 'works')
    expect((await memory.facts.get('user', 'still'))?.value).toBe('works')
  })
})
