import { replicationOf } from '@engram/core/internal'
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import type { Change } from '@engram/core'
import { createLoopbackNetwork, startSync, type SyncStatus } from '@engram/sync'
import { closeAll, mirroredState, openReplica, settle, type Replica } from '../test/replicas.js'

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})
async function replicas(n: number, network = createLoopbackNetwork()) {
  const list: Replica[] = []
  for (let i = 0; i < n; i++) list.push(await openReplica(`r${i}`, network, { start: Date.UTC(2026, 0, 1) + i }))
  open.push(...list)
  return { network, list }
}

describe('startSync over a loopback network', () => {
  it('mirrors facts, blocks and summaries both ways', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await a!.memory.facts.set('p', 'color', 'blue', { tags: ['pref'] })
    await b!.memory.blocks.set('p', 'persona', 'Helpful and brief')
    await a!.memory.summaries.create('p', { kind: 'project', text: 'A project about colors' })
    await settle(network, [a!, b!])
    expect((await b!.memory.facts.get('p', 'color'))?.value).toBe('blue')
    expect((await a!.memory.blocks.get('p', 'persona'))?.value).toBe('Helpful and brief')
    expect((await b!.memory.summaries.latest('p'))?.text).toBe('A project about colors')
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
    expect(a!.sync.status('p')).toBe('synced')
    expect(a!.errors).toEqual([])
  })

  it('converges concurrent edits of one key on the latest HLC, on every device and in the document', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    network.disconnect('r0')
    await b!.memory.facts.set('p', 'k', 'b wins') // b's clock is 1 ms ahead
    await a!.memory.facts.set('p', 'k', 'a loses')
    network.reconnect('r0')
    await settle(network, [a!, b!])
    expect((await a!.memory.facts.get('p', 'k'))?.value).toBe('b wins')
    expect((await b!.memory.facts.get('p', 'k'))?.value).toBe('b wins')
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
    // the receiving device's history records the remote version
    expect((await a!.memory.facts.history('p', 'k')).map((v) => v.value)).toEqual(['a loses', 'b wins'])
  })

  it('a restore newer than a delete on another device wins, and the reverse', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await a!.memory.facts.set('p', 'k', 1)
    await settle(network, [a!, b!])
    network.disconnect('r1')
    await b!.memory.facts.delete('p', 'k')
    await a!.memory.facts.delete('p', 'k')
    a!.clock.advance(10)
    await a!.memory.facts.restore('p', 'k') // newer than b's delete
    network.reconnect('r1')
    await settle(network, [a!, b!])
    expect((await b!.memory.facts.get('p', 'k'))?.value).toBe(1)
    network.disconnect('r1')
    await a!.memory.facts.set('p', 'k', 2)
    b!.clock.advance(100)
    await b!.memory.facts.delete('p', 'k')
    network.reconnect('r1')
    await settle(network, [a!, b!])
    expect(await a!.memory.facts.get('p', 'k')).toBeUndefined()
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
  })

  it('remote changes reach the change feed as remote and cause no outbound update (no echo)', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await settle(network, [a!, b!])
    const seen: Change[] = []
    await b!.memory.changes.subscribe({ kinds: ['facts'] }, (batch) => seen.push(...batch))
    const before = network.bytesSent
    await a!.memory.facts.set('p', 'k', 'v')
    await a!.sync.flush()
    const sentByA = network.bytesSent - before
    await settle(network, [a!, b!])
    expect(seen).toEqual([{ kind: 'facts', op: 'put', id: 'p/k', projectId: 'p', origin: 'remote' }])
    expect(network.bytesSent - before).toBe(sentByA) // b sent nothing back
    expect(await replicationOf(b!.memory).pending()).toEqual([])
  })

  it('a write committed before its mirror drained reaches the other replica after a restart (outbox crash)', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('a', network, { docPrefix: 'crash' })
    const b = await openReplica('b', network)
    open.push(b)
    await a.sync.close() // the mirror "crashes": writes keep landing in the outbox only
    await a.memory.facts.set('p', 'k', 'written while down')
    expect(await replicationOf(a.memory).pending()).toHaveLength(1)
    const restarted = startSync(a.memory, { connect: network.connector('a'), docName: (p) => `crash:a:${p}` })
    a.sync = restarted
    open.push(a)
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('written while down')
    expect(await replicationOf(a.memory).pending()).toEqual([])
  })

  // Read back with plain y-indexeddb; a store encrypted at rest keeps sealed updates instead, which a raw read must not reveal.
  it('keeps the document offline in IndexedDB: a reopened device serves what it had (sealed when encrypted at rest)', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('a', network, { docPrefix: 'persist' })
    await a.memory.facts.set('p', 'k', 'kept')
    await a.sync.flush()
    await a.sync.close()
    if (process.env.ENGRAM_TEST_ENCRYPTION === '1') {
      // Sealed with the store's first key generation, in that generation's database; no plain copy.
      expect((await indexedDB.databases()).map((d) => d.name).filter((n) => n?.endsWith('persist:a:p'))).toEqual(['engram-sealed@1:persist:a:p'])
      const updates = await rawUpdates('engram-sealed@1:persist:a:p')
      expect(updates.length).toBeGreaterThan(0)
      expect(updates.some((u) => new TextDecoder().decode(u).includes('kept'))).toBe(false)
      await a.memory.close()
      return
    }
    const doc = new Y.Doc()
    const { IndexeddbPersistence } = await import('y-indexeddb')
    const persisted = new IndexeddbPersistence('persist:a:p', doc)
    await persisted.whenSynced
    expect(JSON.stringify(doc.getArray('facts').toJSON())).toContain('kept')
    await persisted.destroy()
    await a.memory.close()
  })

  it('turning sync on mirrors existing memory; turning it off stops without deleting', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('a', network, { projectSync: false })
    const b = await openReplica('b', network, { projectSync: false })
    open.push(a, b)
    await a.memory.facts.set('p', 'old', 'from before sync')
    expect(a.sync.status('p')).toBe('off')
    const statuses: SyncStatus[] = []
    a.sync.onStatus((projectId, status) => {
      if (projectId === 'p') statuses.push(status)
    })
    await a.memory.projects.update('p', { sync: { enabled: true } })
    await b.memory.projects.update('p', { sync: { enabled: true } })
    await a.sync.whenSynced('p')
    await b.sync.whenSynced('p')
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'old'))?.value).toBe('from before sync')
    // Turning sync off reaches the engine through the change feed: wait for its status, not for time.
    const stopped = new Promise<void>((resolve) =>
      a.sync.onStatus((projectId, status) => {
        if (projectId === 'p' && status === 'off') resolve()
      }),
    )
    await a.memory.projects.update('p', { sync: { enabled: false } })
    await stopped
    expect(a.sync.status('p')).toBe('off')
    expect(statuses).toEqual(['connecting', 'synced', 'off'])
    await a.memory.facts.set('p', 'later', 'stays local')
    await settle(network, [a, b])
    expect(await b.memory.facts.get('p', 'later')).toBeUndefined()
    expect((await a.memory.facts.get('p', 'old'))?.value).toBe('from before sync')
  })

  it('reports offline while cut off and synced again after the heal', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await a!.sync.whenSynced('p')
    const seen: SyncStatus[] = []
    a!.sync.onStatus((_, status) => seen.push(status))
    network.disconnect('r0')
    expect(a!.sync.status('p')).toBe('offline')
    await a!.memory.facts.set('p', 'while-offline', true)
    await settle(network, [a!, b!])
    expect(await b!.memory.facts.get('p', 'while-offline')).toBeUndefined()
    network.reconnect('r0')
    await settle(network, [a!, b!])
    expect((await b!.memory.facts.get('p', 'while-offline'))?.value).toBe(true)
    expect(seen).toEqual(['offline', 'synced'])
  })

  it('skips malformed records written into the document by a foreign client and applies the rest', async () => {
    const {
      network,
      list: [a],
    } = await replicas(1)
    const rogue = new Y.Doc()
    network.connector('rogue')({ doc: rogue, room: 'u1/p', projectId: 'p', setStatus: () => {} })
    const facts = new YKeyValue<unknown>(rogue.getArray('facts'))
    const hlc = `${Date.UTC(2026, 0, 1) + 1000}.00000.rogue`
    facts.set('p/bad', { value: 1, confidence: 'very', tags: [], createdAt: 1, updatedAt: 1, hlc })
    facts.set('p/good', { value: 'ok', confidence: 1, tags: [], createdAt: 1, updatedAt: 1, hlc })
    facts.set('other/x', { value: 'foreign project id', confidence: 1, tags: [], createdAt: 1, updatedAt: 1, hlc })
    await settle(network, [a!])
    expect((await a!.memory.facts.get('p', 'good'))?.value).toBe('ok')
    expect(await a!.memory.facts.get('p', 'bad')).toBeUndefined()
    // Both reported (nothing is skipped silently): the malformed value and the id of another project.
    expect(a!.errors.map((e) => (e as { code?: string }).code)).toEqual(['invalid_input', 'invalid_input'])
    expect(a!.errors.map((e) => (e as Error).message).sort()).toEqual([
      'Skipped a malformed facts record p/bad from the document of p',
      'Skipped facts "other/x" of the document of p: its id names no record of this project',
    ])
    a!.errors.length = 0
  })

  it('a fact key or session id with a lone surrogate is refused at the call (invalid_input naming it); sync carries on', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    for (const r of [a!, b!]) await r.memory.projects.setSync('p', { messages: true })
    await settle(network, [a!, b!])
    await expect(a!.memory.facts.set('p', 'bad\uD800key', 1)).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/^key holds a lone surrogate/),
    })
    await expect(a!.memory.sessions.create('p', { id: 'bad\uDC00id' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/^id holds/),
    })
    await a!.memory.facts.set('p', 'good', 1)
    await settle(network, [a!, b!])
    expect((await b!.memory.facts.get('p', 'good'))?.value).toBe(1)
    expect([a!.sync.status('p'), b!.sync.status('p')]).toEqual(['synced', 'synced'])
    expect([...a!.errors, ...b!.errors]).toEqual([])
  })

  it('rejects bad options before starting', async () => {
    const [a] = (await replicas(1)).list
    expect(() => startSync(a!.memory, { url: 'not a url', token: async () => 't' })).toThrow(/url/)
    expect(() => startSync(a!.memory, { url: 'ws://127.0.0.1:1' } as never)).toThrow(/token/)
  })
})

/** Every stored update of a y-indexeddb database, read with IndexedDB itself. */
async function rawUpdates(name: string): Promise<Uint8Array[]> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(name)
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
  try {
    return await new Promise<Uint8Array[]>((resolve, reject) => {
      const req = db.transaction('updates', 'readonly').objectStore('updates').getAll()
      req.onsuccess = () => resolve((req.result as unknown[]).map((v) => new Uint8Array(v as ArrayBufferLike)))
      req.onerror = () => reject(req.error)
    })
  } finally {
    db.close()
  }
}
