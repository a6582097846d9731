import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterEach, describe, expect, it } from 'vitest'
import { databaseName, openMemory, type EncryptionStatus, type Memory, type MemoryOptions } from '@engram/core'
import { rawDump, whereFound } from '../../../../test/support/raw-idb.js'

/*
 * `enable` and `rekey` end by moving the store into a fresh database and
 * deleting the old one (database-move.ts): what was superseded in place
 * (plaintext, rows sealed with retired keys) goes with it. The store stays
 * usable throughout, a move cut short resumes, and whatever a crash leaves
 * behind is sorted out at the next open.
 */

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])

let users = 0
const open: Memory[] = []
afterEach(async () => {
  for (const m of open.splice(0)) await m.close()
})

function store() {
  const indexedDB = new IDBFactory()
  const userId = `move${++users}`
  return {
    indexedDB,
    userId,
    first: databaseName('move', userId),
    async open(options: Partial<MemoryOptions> = {}) {
      const m = await openMemory({ appId: 'move', userId, indexedDB, IDBKeyRange, mergeDelayMs: Infinity, ...options } as MemoryOptions)
      open.push(m)
      return m
    },
    names: async () => (await indexedDB.databases()).map((d) => d.name!).sort(),
  }
}

async function fill(m: Memory, n = 40): Promise<void> {
  await m.projects.create({ id: 'p', name: 'Secret project' })
  for (let i = 0; i < n; i++) await m.facts.set('p', `k${i}`, `value ${i} secret`)
  const s = await m.sessions.create('p')
  for (let i = 0; i < 10; i++) await m.messages.appendExchange(s.id, `question ${i} secret`, `answer ${i} secret`)
}

/** Resolves with the first status `when` accepts. */
function statusWhere(m: Memory, when: (s: EncryptionStatus) => boolean): Promise<EncryptionStatus> {
  return new Promise((resolve) => {
    void m.encryption.subscribe((s) => {
      if (when(s)) resolve(s)
    })
  })
}

describe('the move into a fresh database', () => {
  it('enable and each rekey move the store (engram@<generation>) and delete the database before; nothing superseded stays', async () => {
    const s = store()
    const m = await s.open()
    await fill(m)
    expect(await s.names()).toEqual([s.first])
    const key = await newKey()
    await m.encryption.enable(key)
    expect(await m.encryption.status()).toEqual({ state: 'encrypted', generation: 1 })
    expect(await s.names()).toEqual([`engram@1:move:${s.userId}`])
    expect(whereFound(await rawDump(s.indexedDB), 'secret')).toEqual([])
    // The same session goes on in the new database, through two more moves.
    await m.facts.set('p', 'after-enable', 'kept')
    const second = await newKey()
    await m.encryption.rekey(second)
    await m.facts.set('p', 'after-rekey', 'kept too')
    const third = await newKey()
    await m.encryption.rekey(third)
    expect(await s.names()).toEqual([`engram@3:move:${s.userId}`])
    expect((await m.facts.list('p', { limit: 100 })).items.length).toBe(42)
    await m.close()
    await expect(s.open({ encryption: { key: second } })).rejects.toMatchObject({ code: 'crypto' })
    const again = await s.open({ encryption: { key: third } })
    expect((await again.facts.get('p', 'after-rekey'))?.value).toBe('kept too')
    expect((await again.facts.get('p', 'k7'))?.value).toBe('value 7 secret')
    expect((await again.search('p', 'question')).length).toBeGreaterThan(0)
  })

  it('a new store opened encrypted and an empty store do not move', async () => {
    const s = store()
    const m = await s.open({ encryption: { key: await newKey() } })
    await m.facts.set('user', 'a', 'b')
    expect(await s.names()).toEqual([s.first])
  })

  it('writes made while the store moves all land, and survive a reopen', async () => {
    const s = store()
    const m = await s.open({ encryption: { key: await newKey(), batchSize: 5 } })
    await fill(m)
    const expected = new Map(Array.from({ length: 40 }, (_, i) => [`k${i}`, `value ${i} secret`]))
    const key = await newKey()
    const rekey = m.encryption.rekey(key)
    let writes = 0
    let over = false
    void rekey.then(() => (over = true))
    // One write after the other, as an app does, from the start of the run to past its end.
    while (!over || writes < 5) {
      await m.facts.set('p', `during${writes % 25}`, `write ${writes}`)
      expected.set(`during${writes % 25}`, `write ${writes}`)
      if (writes % 3 === 0) {
        await m.facts.delete('p', `k${writes % 40}`)
        expected.delete(`k${writes % 40}`)
      }
      writes++
    }
    await rekey
    expect(writes).toBeGreaterThan(20)
    await m.close()
    const again = await s.open({ encryption: { key } })
    const facts = (await again.facts.list('p', { limit: 200 })).items
    expect(new Map(facts.map((f) => [f.key, f.value]))).toEqual(expected)
    expect(await s.names()).toEqual([`engram@2:move:${s.userId}`])
  })

  it('a move cut short (the store closed during it) starts again at the next open and ends', async () => {
    const s = store()
    const m = await s.open()
    await fill(m, 120)
    const key = await newKey()
    const cut = new Promise<void>((resolve) => {
      void m.encryption.subscribe(async () => {
        if (!m.closed && (await s.names()).some((n) => n.startsWith('engram@'))) {
          void m.close()
          resolve()
        }
      })
    })
    const run = m.encryption.enable(key).catch(() => {})
    await cut
    await run
    const reopened = await s.open({ encryption: { key, batchSize: 5 } })
    expect((await reopened.encryption.status()).state).toBe('encrypting')
    expect((await reopened.facts.get('p', 'k99'))?.value).toBe('value 99 secret')
    await statusWhere(reopened, (st) => st.state === 'encrypted')
    expect(await s.names()).toEqual([`engram@1:move:${s.userId}`])
    expect(whereFound(await rawDump(s.indexedDB), 'secret')).toEqual([])
    expect((await reopened.facts.list('p', { limit: 200 })).items.length).toBe(120)
  })

  it('what a crash leaves is sorted out at open: the database moved from, and an unfinished copy, are deleted', async () => {
    const s = store()
    const m = await s.open()
    await fill(m, 3)
    const key = await newKey()
    await m.encryption.enable(key)
    await m.close()
    const make = (name: string, fill: (db: IDBDatabase) => void) =>
      new Promise<void>((resolve, reject) => {
        const r = s.indexedDB.open(name, 10)
        r.onupgradeneeded = () => fill(r.result)
        r.onsuccess = () => {
          r.result.close()
          resolve()
        }
        r.onerror = () => reject(r.error)
      })
    // As if the erase of the first database had not happened, and a later move had been cut short mid-copy.
    await make(s.first, (db) => db.createObjectStore('meta', { keyPath: 'key' }).put({ key: 'x', value: 'plain secret' }))
    await make(`engram@7:move:${s.userId}`, (db) => db.createObjectStore('meta', { keyPath: 'key' }).put({ key: 'x', value: 'partial' }))
    expect(await s.names()).toHaveLength(3)
    const again = await s.open({ encryption: { key } })
    expect(await s.names()).toEqual([`engram@1:move:${s.userId}`])
    expect((await again.facts.get('p', 'k2'))?.value).toBe('value 2 secret')
    expect(whereFound(await rawDump(s.indexedDB), 'secret')).toEqual([])
  })
})
