import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadRoom } from './room.js'
import type { Peer } from './room.js'
import { createMetrics } from './metrics.js'
import { silentLogger } from './log.js'
import { openSqliteStore } from './persistence-sqlite.js'
import type { RelayStore } from './persistence.js'
import { encodeUpdate } from './protocol.js'

const tempStore = (name: string): RelayStore => openSqliteStore(mkdtempSync(join(tmpdir(), `engram-room-${name}-`)))
const context = (store: RelayStore, compactAfterUpdates = 1000) => ({ store, metrics: createMetrics(), log: silentLogger, maxDocumentBytes: 1e7, compactAfterUpdates })
const recorder = (): Peer & { got: Uint8Array[] } => {
  const got: Uint8Array[] = []
  return { got, send (m) { got.push(m) } }
}
const updateFrom = (fn: (doc: Y.Doc) => void, doc = new Y.Doc()): Uint8Array => {
  let update: Uint8Array | null = null
  doc.once('update', (u: Uint8Array) => { update = u })
  fn(doc)
  if (update === null) throw new Error('no update')
  return update
}

describe('room', () => {
  it('stores an update before any peer receives it', async () => {
    const store = tempStore('order')
    const events: string[] = []
    const spy: RelayStore = { ...store, append: (room, u) => { events.push('append'); return store.append(room, u) } }
    const room = loadRoom('u/p', context(spy))
    const from = recorder()
    const to: Peer = { send () { events.push('send') } }
    room.join(from)
    room.join(to)
    events.length = 0
    expect(room.receive(from, encodeUpdate(updateFrom(d => d.getMap('m').set('a', 1))))).toBeNull()
    expect(events).toEqual(['append', 'send'])
    await store.close()
  })

  it('compacts stored updates into one snapshot past the threshold and reloads the same state', async () => {
    const store = tempStore('compact')
    const room = loadRoom('u/p', context(store, 10))
    const peer = recorder()
    room.join(peer)
    const source = new Y.Doc()
    for (let i = 0; i < 95; i++) room.receive(peer, encodeUpdate(updateFrom(d => d.getArray('a').push([i]), source)))
    expect(store.load('u/p').updates.length).toBeLessThanOrEqual(10)
    room.unload()
    expect(store.load('u/p').updates).toHaveLength(1)
    const again = loadRoom('u/p', context(store))
    expect(again.doc.getArray('a').toArray()).toEqual(Array.from({ length: 95 }, (_, i) => i))
    await store.close()
  })

  it('persists updates still waiting for their dependencies', async () => {
    const store = tempStore('pending')
    const room = loadRoom('u/p', context(store))
    const peer = recorder()
    room.join(peer)
    const source = new Y.Doc()
    const first = updateFrom(d => d.getArray('a').push([1]), source)
    const second = updateFrom(d => d.getArray('a').push([2]), source)
    expect(room.receive(peer, encodeUpdate(second))).toBeNull()
    expect(room.doc.store.pendingStructs).not.toBeNull()
    room.unload()
    const again = loadRoom('u/p', context(store))
    Y.applyUpdate(again.doc, first)
    expect(again.doc.getArray('a').toArray()).toEqual([1, 2])
    await store.close()
  })

  it('sends nothing and reports internalError when the store fails', async () => {
    const store = tempStore('fail')
    const failing: RelayStore = { ...store, append: () => { throw new Error('disk full') } }
    const ctx = context(failing)
    const room = loadRoom('u/p', ctx)
    const from = recorder()
    const to = recorder()
    room.join(from)
    room.join(to)
    const sentBefore = to.got.length
    expect(room.receive(from, encodeUpdate(updateFrom(d => d.getMap('m').set('a', 1))))).toBe('internalError')
    expect(to.got.length).toBe(sentBefore)
    expect(ctx.metrics.persistErrors).toBe(1)
    await store.close()
  })
})
