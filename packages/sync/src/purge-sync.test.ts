import { describe, expect, it } from 'vitest'
import { atRestCipherOf } from '@engram/core/internal'
import * as Y from 'yjs'
import { createLoopbackNetwork, type Connector } from '@engram/sync'
import { closeAll, openReplica, settle } from '../test/replicas.js'

const CANARY = 'purge-canary-7c1f'

/** Every value of every object store of the IndexedDB databases whose name starts with `prefix`, as one string. */
async function storedBytes(factory: IDBFactory, prefix: string): Promise<string> {
  const names = (await factory.databases()).map((d) => d.name!).filter((n) => n.startsWith(prefix))
  let all = ''
  for (const name of names) {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = factory.open(name)
      open.onsuccess = () => resolve(open.result)
      open.onerror = () => reject(open.error)
    })
    for (const store of db.objectStoreNames) {
      const values = await new Promise<unknown[]>((resolve, reject) => {
        const request = db.transaction(store, 'readonly').objectStore(store).getAll()
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(request.error)
      })
      for (const v of values) all += v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : JSON.stringify(v)
    }
    db.close()
  }
  return all
}

describe('facts.purge across devices', () => {
  it('removes the fact, its history and its content from both stores, both documents and the stored documents', async () => {
    const network = createLoopbackNetwork()
    const docs = new Map<string, Y.Doc>()
    const capture =
      (name: string): Connector =>
      (ctx) => {
        docs.set(name, ctx.doc)
        return network.connector(name)(ctx)
      }
    const a = await openReplica('a', network, { connect: capture('a'), docPrefix: 'purge' })
    const b = await openReplica('b', network, { connect: capture('b'), docPrefix: 'purge' })
    try {
      await a.memory.facts.set('p', 'diagnosis', `${CANARY} value`, { tags: ['health'] })
      await a.memory.facts.set('p', 'diagnosis', `${CANARY} second value`)
      await settle(network, [a, b])
      expect((await b.memory.facts.get('p', 'diagnosis'))?.value).toBe(`${CANARY} second value`)
      const bytesBefore = Buffer.from(Y.encodeStateAsUpdate(docs.get('b')!)).toString('latin1')
      expect(bytesBefore).toContain(CANARY) // the checks below can see the canary when it is there
      await b.sync.flush()
      // y-indexeddb keeps the documents in the global IndexedDB, one database per device and project
      // (sealed when the store is encrypted at rest: then the canary is never there).
      if (atRestCipherOf(b.memory)) expect(await storedBytes(indexedDB, 'purge:b:')).not.toContain(CANARY)
      else expect(await storedBytes(indexedDB, 'purge:b:')).toContain(CANARY)

      expect(await a.memory.facts.purge('p', 'diagnosis')).toBe(1)
      await settle(network, [a, b])

      for (const r of [a, b]) {
        expect(await r.memory.facts.get('p', 'diagnosis'), r.name).toBeUndefined()
        expect(await r.memory.facts.history('p', 'diagnosis'), r.name).toEqual([])
        expect(await r.memory.search('p', CANARY), r.name).toEqual([])
        expect(JSON.stringify(await r.memory.export('p')), r.name).not.toContain(CANARY)
        expect(Buffer.from(Y.encodeStateAsUpdate(docs.get(r.name)!)).toString('latin1'), `document of ${r.name}`).not.toContain(CANARY)
        await r.sync.flush()
        expect(await storedBytes(indexedDB, `purge:${r.name}:`), `stored document of ${r.name}`).not.toContain(CANARY)
      }
      expect(a.errors).toEqual([])
      expect(b.errors).toEqual([])

      // The key lives on: a new value written after the purge reaches the other device.
      await b.memory.facts.set('p', 'diagnosis', 'all clear')
      await settle(network, [a, b])
      expect((await a.memory.facts.get('p', 'diagnosis'))?.value).toBe('all clear')
    } finally {
      await closeAll([a, b])
    }
  })
})
