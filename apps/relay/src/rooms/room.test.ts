import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openRoom } from './room.js'
import type { Peer, Room, RoomContext } from './room.js'
import { localFanout } from '../cluster/fanout.js'
import { defaultLimits } from '../limits/limits.js'
import { createMetrics } from '../http/metrics.js'
import { silentLogger } from '../log.js'
import { openSqliteStore } from '../storage/persistence-sqlite.js'
import type { RelayStore } from '../storage/persistence.js'
import { encodeUpdate } from './protocol.js'
import { createUserQuotas } from '../limits/user-quotas.js'
import { createWriteBatch } from './write-batch.js'

const tempStore = (name: string): RelayStore => openSqliteStore(mkdtempSync(join(tmpdir(), `engram-room-${name}-`)))
const context = (store: RelayStore, compactAfterUpdates = 1000, onFailure = (_rooms: Set<string>) => {}): RoomContext => {
  const metrics = createMetrics()
  return {
    store,
    batch: createWriteBatch(store, metrics, onFailure),
    fanout: localFanout('test'),
    quotas: createUserQuotas(store, defaultLimits),
    metrics,
    log: silentLogger,
    limits: { ...defaultLimits, maxDocumentBytes: 1e7, compactAfterUpdates },
  }
}
const recorder = (): Peer & { got: Uint8Array[] } => {
  const got: Uint8Array[] = []
  return {
    got,
    send(m) {
      got.push(m)
    },
  }
}
const updateFrom = (fn: (doc: Y.Doc) => void, doc = new Y.Doc()): Uint8Array => {
  let update: Uint8Array | null = null
  doc.once('update', (u: Uint8Array) => {
    update = u
  })
  fn(doc)
  if (update === null) throw new Error('no update')
  return update
}
const nextTurn = async (): Promise<void> => {
  await new Promise((resolve) => setImmediate(resolve))
}
const step1 = (doc: Y.Doc): Uint8Array =>
  Uint8Array.from([
    0,
    0,
    ...(() => {
      const sv = Y.encodeStateVector(doc)
      return [sv.length, ...sv]
    })(),
  ])
const storedCount = async (store: RelayStore, room: string): Promise<number> => (await store.load(room)).updates.length

describe('room', () => {
  it('commits updates before any peer receives them, one commit per event-loop turn', async () => {
    const store = tempStore('order')
    const events: string[] = []
    const spy: RelayStore = {
      ...store,
      appendMany: async (entries) => {
        events.push(`commit ${entries.length}`)
        await store.appendMany(entries)
      },
    }
    const room = await openRoom('u/p', context(spy))
    const from = recorder()
    const to: Peer = {
      send() {
        events.push('send')
      },
    }
    room.join(from)
    room.join(to)
    events.length = 0
    const source = new Y.Doc()
    for (let i = 0; i < 3; i++) expect(room.receive(from, encodeUpdate(updateFrom((d) => d.getMap('m').set('a', i), source)))).toBeNull()
    expect(events).toEqual([])
    await nextTurn()
    await nextTurn()
    expect(events).toEqual(['commit 3', 'send', 'send', 'send'])
    await store.close()
  })

  it('commits queued updates before answering sync step 1', async () => {
    const store = tempStore('step2')
    const room = await openRoom('u/p', context(store))
    const writer = recorder()
    const reader = recorder()
    room.join(writer)
    room.join(reader)
    const before = reader.got.length
    room.receive(writer, encodeUpdate(updateFrom((d) => d.getMap('m').set('a', 1))))
    expect(await storedCount(store, 'u/p')).toBe(0)
    room.receive(reader, step1(new Y.Doc()))
    expect(reader.got.length).toBe(before)
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (reader.got.length > before + 1) resolve()
        else setImmediate(check)
      }
      check()
    })
    expect(await storedCount(store, 'u/p')).toBe(1)
    await store.close()
  })

  it('compacts stored updates into one snapshot past the threshold and reloads the same state', async () => {
    const store = tempStore('compact')
    const room = await openRoom('u/p', context(store, 10))
    const peer = recorder()
    room.join(peer)
    const source = new Y.Doc()
    for (let i = 0; i < 95; i++) {
      room.receive(peer, encodeUpdate(updateFrom((d) => d.getArray('a').push([i]), source)))
      if (i % 7 === 0) await nextTurn()
    }
    await room.compact()
    expect(await storedCount(store, 'u/p')).toBeLessThan(95)
    await room.unload()
    expect(await storedCount(store, 'u/p')).toBeLessThanOrEqual(2)
    const again = await openRoom('u/p', context(store))
    expect(again.doc.getArray('a').toArray()).toEqual(Array.from({ length: 95 }, (_, i) => i))
    await store.close()
  })

  it('persists updates still waiting for their dependencies', async () => {
    const store = tempStore('pending')
    const room = await openRoom('u/p', context(store))
    const peer = recorder()
    room.join(peer)
    const source = new Y.Doc()
    const first = updateFrom((d) => d.getArray('a').push([1]), source)
    const second = updateFrom((d) => d.getArray('a').push([2]), source)
    expect(room.receive(peer, encodeUpdate(second))).toBeNull()
    expect(room.doc.store.pendingStructs).not.toBeNull()
    await room.unload()
    const again = await openRoom('u/p', context(store))
    Y.applyUpdate(again.doc, first)
    expect(again.doc.getArray('a').toArray()).toEqual([1, 2])
    await store.close()
  })

  it('drops document updates from a read-only peer', async () => {
    const store = tempStore('readonly')
    const ctx = context(store)
    const room = await openRoom('u/p', ctx)
    const viewer: Peer = { send() {}, readOnly: true }
    room.join(viewer)
    expect(room.receive(viewer, encodeUpdate(updateFrom((d) => d.getMap('m').set('a', 1))))).toBeNull()
    expect(room.doc.getMap('m').size).toBe(0)
    expect(ctx.metrics.writesDropped).toBe(1)
    await store.close()
  })

  it('relays nothing and reports the rooms whose commit failed', async () => {
    const store = tempStore('fail')
    const failing: RelayStore = {
      ...store,
      appendMany: async () => {
        throw new Error('disk full')
      },
    }
    const failed: string[] = []
    const ctx = context(failing, 1000, (rooms) => {
      failed.push(...rooms)
    })
    const room: Room = await openRoom('u/p', ctx)
    const from = recorder()
    const to = recorder()
    room.join(from)
    room.join(to)
    const sentBefore = to.got.length
    expect(room.receive(from, encodeUpdate(updateFrom((d) => d.getMap('m').set('a', 1))))).toBeNull()
    expect(await ctx.batch.flush()).toBe(false)
    expect(to.got.length).toBe(sentBefore)
    expect(failed).toEqual(['u/p'])
    expect(ctx.metrics.persistErrors).toBe(1)
    await store.close()
  })
})
