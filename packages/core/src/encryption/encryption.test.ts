import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterEach, describe, expect, it } from 'vitest'
import { databaseName, deriveMemoryKey, MEMORY_KEY_ITERATIONS, openMemory, type EncryptionStatus, type Memory, type MemoryOptions } from '@engram/core'
import { rawDump, whereFound } from '../../../../test/support/raw-idb.js'

const newKey = (usages: KeyUsage[] = ['encrypt', 'decrypt']) => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, usages) as Promise<CryptoKey>

let users = 0
const open: Memory[] = []
afterEach(async () => {
  for (const m of open.splice(0)) await m.close()
})

interface Store {
  indexedDB: IDBFactory
  userId: string
  open(options?: Partial<MemoryOptions>): Promise<Memory>
  raw(): Promise<Record<string, string>>
}

/** One database; `open` opens it (again) with the given options. */
function store(): Store {
  const indexedDB = new IDBFactory()
  const userId = `enc${++users}`
  return {
    indexedDB,
    userId,
    async open(options = {}) {
      const m = await openMemory({ appId: 'enc', userId, indexedDB, IDBKeyRange, mergeDelayMs: Infinity, ...options } as MemoryOptions)
      open.push(m)
      return m
    },
    raw: () => rawDump(indexedDB),
  }
}

/** Resolves once the store's encryption run (if any) is over. */
async function settled(m: Memory): Promise<EncryptionStatus> {
  const now = await m.encryption.status()
  if (now.state === 'encrypted' || now.state === 'plain') return now
  return new Promise((resolve) => {
    void m.encryption.subscribe((s) => {
      if (s.state === 'encrypted') resolve(s)
    })
  })
}

/** The store's database: the one `enable` or `rekey` last moved it into (`engram@<generation>:…`), else the first. */
async function currentName(s: Store): Promise<string> {
  const names = (await s.indexedDB.databases()).map((d) => d.name!)
  const moved = names
    .filter((n) => n.endsWith(`:enc:${s.userId}`) && n.startsWith('engram@'))
    .sort((a, b) => Number.parseInt(b.slice(7), 10) - Number.parseInt(a.slice(7), 10))
  return moved[0] ?? databaseName('enc', s.userId)
}

/** The key generations of the sealed rows in a raw database (from each row's `_c` header). */
async function generations(s: Store): Promise<Map<number, number>> {
  const out = new Map<number, number>()
  const name = await currentName(s)
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const r = s.indexedDB.open(name)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
  })
  for (const name of Array.from(db.objectStoreNames)) {
    const rows = await new Promise<Record<string, unknown>[]>((resolve, reject) => {
      const r = db.transaction(name).objectStore(name).getAll()
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    for (const row of rows) {
      const sealed = row._c as Uint8Array | undefined
      if (sealed) out.set(sealed[1]! | (sealed[2]! << 8), (out.get(sealed[1]! | (sealed[2]! << 8)) ?? 0) + 1)
    }
  }
  db.close()
  return out
}

/** Facts, blocks, messages and more with the word `secret` in them. */
async function fill(m: Memory, n = 30): Promise<void> {
  await m.projects.create({ id: 'p', name: 'Secret project' })
  for (let i = 0; i < n; i++) await m.facts.set('p', `k${String(i).padStart(2, '0')}`, `value ${i} secret`, { tags: [i % 2 ? 'odd' : 'even'] })
  await m.blocks.set('p', 'persona', 'a secret persona')
  await m.blocks.set('p', 'goals', 'secret goals')
  const s = await m.sessions.create('p')
  for (let i = 0; i < 10; i++) await m.messages.appendExchange(s.id, `question ${i} secret`, `answer ${i} secret`)
  await m.lessons.create('p', 'cooking', 'salt the secret pasta water')
  await m.limitations.store({ title: 'Cannot read secret PDFs' })
}

/** What `fill` wrote, read back through the API. */
async function readAll(m: Memory, n = 30) {
  const facts = await m.facts.list('p', { limit: 100 })
  return {
    project: (await m.projects.get('p'))?.name,
    keys: facts.items.map((f) => f.key),
    odd: (await m.facts.list('p', { tag: 'odd', limit: 100 })).items.length,
    prefixed: (await m.facts.list('p', { prefix: 'k1', limit: 100 })).items.map((f) => f.key),
    value: (await m.facts.get('p', 'k07'))?.value,
    blocks: (await m.blocks.list('p')).map((b) => b.label),
    hits: (await m.search('p', 'secret', { limit: 5 })).length,
    lessons: (await m.lessons.list('p', { domain: 'cooking' })).map((l) => l.rule),
    limitations: (await m.limitations.open()).map((l) => l.title),
    n,
  }
}

const EXPECTED = {
  project: 'Secret project',
  keys: Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`),
  odd: 15,
  prefixed: Array.from({ length: 10 }, (_, i) => `k1${i}`),
  value: 'value 7 secret',
  blocks: ['goals', 'persona'],
  hits: 5,
  lessons: ['salt the secret pasta water'],
  limitations: ['Cannot read secret PDFs'],
  n: 30,
}

describe('deriveMemoryKey', () => {
  it('derives the same non-extractable AES-GCM key from the same passphrase and salt (PBKDF2, at least 600,000 rounds)', async () => {
    expect(MEMORY_KEY_ITERATIONS).toBeGreaterThanOrEqual(600_000)
    const salt = new Uint8Array(16).fill(7)
    const key = await deriveMemoryKey('correct horse battery staple', salt)
    expect(key).toMatchObject({ type: 'secret', extractable: false, algorithm: { name: 'AES-GCM', length: 256 } })
    const s = store()
    const m = await s.open({ encryption: { key } })
    await m.facts.set('user', 'name', 'Ada')
    await m.close()
    const again = await s.open({ encryption: { key: await deriveMemoryKey('correct horse battery staple', salt) } })
    expect((await again.facts.get('user', 'name'))?.value).toBe('Ada')
    await again.close()
    const otherSalt = await deriveMemoryKey('correct horse battery staple', new Uint8Array(16).fill(8))
    await expect(s.open({ encryption: { key: otherSalt } })).rejects.toMatchObject({ code: 'crypto' })
  })

  it('refuses an empty passphrase and a missing or short salt', async () => {
    await expect(deriveMemoryKey('', new Uint8Array(16))).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(deriveMemoryKey(42 as never, new Uint8Array(16))).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(deriveMemoryKey('pw', new Uint8Array(8))).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/16/) })
    await expect(deriveMemoryKey('pw', 'salt' as never)).rejects.toMatchObject({ code: 'invalid_input' })
  })
})

describe('openMemory({ encryption })', () => {
  it.each([
    ['not an object', 'key'],
    ['without a key', {}],
    ['with an unknown field', { passphrase: 'x' }],
    ['with a string for a key', { key: 'secret' }],
    ['with a bad batchSize', { key: 'later', batchSize: 0 }],
  ])('refuses an option %s with invalid_input, creating nothing', async (_label, option) => {
    const s = store()
    const value = typeof option === 'object' && (option as { key?: unknown }).key === 'later' ? { ...option, key: await newKey() } : option
    await expect(s.open({ encryption: value as never })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await s.indexedDB.databases()).toEqual([])
  })

  it('refuses a key of another algorithm or without both usages', async () => {
    const s = store()
    const cbc = await crypto.subtle.generateKey({ name: 'AES-CBC', length: 256 }, false, ['encrypt', 'decrypt'])
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    await expect(s.open({ encryption: { key: cbc } })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/AES-GCM/) })
    await expect(s.open({ encryption: { key: hmac } })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(s.open({ encryption: { key: await newKey(['encrypt']) } })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/usages/),
    })
    expect(await s.indexedDB.databases()).toEqual([])
  })

  it('a wrong key is crypto at open and writes nothing', async () => {
    const s = store()
    const key = await newKey()
    const m = await s.open({ encryption: { key } })
    await fill(m)
    await m.close()
    const before = await s.raw()
    await expect(s.open({ encryption: { key: await newKey() } })).rejects.toMatchObject({ code: 'crypto', message: expect.stringMatching(/[Ww]rong key/) })
    expect(await s.raw()).toEqual(before)
  })

  it('an encrypted store opened without a key is crypto and writes nothing', async () => {
    const s = store()
    const m = await s.open({ encryption: { key: await newKey() } })
    await fill(m, 3)
    await m.close()
    const before = await s.raw()
    await expect(s.open()).rejects.toMatchObject({ code: 'crypto', message: expect.stringMatching(/encrypted/) })
    expect(await s.raw()).toEqual(before)
  })

  it('a new store is encrypted from its first row; everything reads back the same', async () => {
    const s = store()
    const key = await newKey()
    const m = await s.open({ encryption: { key } })
    expect(await m.encryption.status()).toEqual({ state: 'encrypted', generation: 1 })
    await fill(m)
    expect(await readAll(m)).toEqual(EXPECTED)
    expect(whereFound(await s.raw(), 'secret')).toEqual([])
    await m.close()
    expect(await readAll(await s.open({ encryption: { key } }))).toEqual(EXPECTED)
  })

  it('a plain store opened with a key is encrypted in the background (as enable), readable all along', async () => {
    const s = store()
    const plain = await s.open()
    await fill(plain)
    await plain.close()
    expect(whereFound(await s.raw(), 'secret').length).toBeGreaterThan(0)
    const key = await newKey()
    const m = await s.open({ encryption: { key, batchSize: 7 } })
    expect(['encrypting', 'encrypted']).toContain((await m.encryption.status()).state)
    expect(await readAll(m)).toEqual(EXPECTED)
    await settled(m)
    expect(await readAll(m)).toEqual(EXPECTED)
    expect(whereFound(await s.raw(), 'secret')).toEqual([])
  })
})

describe('memory.encryption', () => {
  it('enable encrypts a plain store in batches with progress events; then the store needs the key', async () => {
    const s = store()
    const m = await s.open()
    await fill(m)
    expect(await m.encryption.status()).toEqual({ state: 'plain', generation: 0 })
    const events: EncryptionStatus[] = []
    await m.encryption.subscribe((e) => events.push(e))
    const key = await newKey()
    await m.encryption.enable(key)
    expect(await m.encryption.status()).toEqual({ state: 'encrypted', generation: 1 })
    expect(events.length).toBeGreaterThan(2)
    expect(events[0]).toMatchObject({ state: 'encrypting', done: 0 })
    const total = events[0]!.total!
    expect(total).toBeGreaterThan(30)
    const dones = events.filter((e) => e.state === 'encrypting').map((e) => e.done!)
    expect([...dones].sort((a, b) => a - b)).toEqual(dones)
    expect(events.at(-1)).toEqual({ state: 'encrypted', generation: 1 })
    expect(await readAll(m)).toEqual(EXPECTED)
    expect(whereFound(await s.raw(), 'secret')).toEqual([])
    await m.close()
    await expect(s.open()).rejects.toMatchObject({ code: 'crypto' })
    expect(await readAll(await s.open({ encryption: { key } }))).toEqual(EXPECTED)
  })

  it('refuses enable twice, rekey of a plain store, bad keys, a second run during one, and any call after close', async () => {
    const s = store()
    const m = await s.open()
    await expect(m.encryption.rekey(await newKey())).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/enable/) })
    await expect(m.encryption.enable('key' as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(m.encryption.enable(await newKey(['decrypt']))).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(m.encryption.subscribe('listener' as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await m.encryption.enable(await newKey())
    await expect(m.encryption.enable(await newKey())).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/rekey/) })
    await expect(m.encryption.rekey({} as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await fill(m, 40)
    const running = m.encryption.rekey(await newKey())
    await expect(m.encryption.rekey(await newKey())).rejects.toMatchObject({ code: 'conflict' })
    await running
    await m.close()
    await expect(m.encryption.status()).rejects.toMatchObject({ code: 'closed' })
    await expect(m.encryption.enable(await newKey())).rejects.toMatchObject({ code: 'closed' })
  })

  it('rekey re-encrypts every row under new data keys wrapped by the new key; the old key stops opening the store', async () => {
    const s = store()
    const oldKey = await newKey()
    const m = await s.open({ encryption: { key: oldKey, batchSize: 9 } })
    await fill(m)
    expect([...(await generations(s)).keys()]).toEqual([1])
    const newer = await newKey()
    await m.encryption.rekey(newer)
    expect(await m.encryption.status()).toEqual({ state: 'encrypted', generation: 2 })
    expect([...(await generations(s)).keys()]).toEqual([2])
    expect(await readAll(m)).toEqual(EXPECTED)
    await m.close()
    await expect(s.open({ encryption: { key: oldKey } })).rejects.toMatchObject({ code: 'crypto' })
    const again = await s.open({ encryption: { key: newer } })
    expect(await readAll(again)).toEqual(EXPECTED)
    expect(whereFound(await s.raw(), 'secret')).toEqual([])
  })

  it.each(['enable', 'rekey'] as const)('a %s cut short (the tab closed between batches) resumes at the next open and everything reads back', async (kind) => {
    const s = store()
    const first = await newKey()
    const m = await s.open(kind === 'rekey' ? { encryption: { key: first, batchSize: 4 } } : {})
    await fill(m)
    const second = await newKey()
    const cut = new Promise<number>((resolve) => {
      void m.encryption.subscribe((e) => {
        if ((e.done ?? 0) >= 12 && !m.closed) {
          void m.close()
          resolve(e.done!)
        }
      })
    })
    // The run stops with the store: enable/rekey resolve or fail, the store is closed either way.
    const run = kind === 'enable' ? m.encryption.enable(first) : m.encryption.rekey(second)
    await cut
    await run.catch(() => {})
    const raw = await s.raw()
    const progress = Object.entries(raw).find(([part]) => part.endsWith('/store:meta'))![1]
    expect(progress).toContain('encryption.progress')
    // Both generations (or plain rows and generation 1) are on disk now.
    const gens = await generations(s)
    expect(gens.size + (kind === 'enable' && whereFound(raw, 'secret').length > 0 ? 1 : 0)).toBeGreaterThanOrEqual(2)
    const key = kind === 'enable' ? first : second
    const reopened = await s.open({ encryption: { key, batchSize: 4 } })
    expect((await reopened.encryption.status()).state).toBe(kind === 'enable' ? 'encrypting' : 'rekeying')
    // Usable meanwhile: reads see every row, writes land.
    expect(await readAll(reopened)).toEqual(EXPECTED)
    await reopened.facts.set('p', 'k05', 'rewritten during the run')
    await settled(reopened)
    expect((await reopened.facts.get('p', 'k05'))?.value).toBe('rewritten during the run')
    await reopened.facts.set('p', 'k05', 'value 5 secret', { tags: ['odd'] })
    expect(await readAll(reopened)).toEqual(EXPECTED)
    expect([...(await generations(s)).keys()]).toEqual([kind === 'enable' ? 1 : 2])
    expect(whereFound(await s.raw(), 'secret')).toEqual([])
    expect(Object.entries(await s.raw()).find(([part]) => part.endsWith('/store:meta'))![1]).not.toContain('encryption.progress')
  })

  it('lookups and ordered listings stay right while rows of two generations live side by side', async () => {
    const s = store()
    const key = await newKey()
    const m = await s.open({ encryption: { key, batchSize: 3 } })
    await fill(m)
    let checks = 0
    let failure: unknown
    const done = new Promise<void>((resolve) => {
      void m.encryption.subscribe((e) => {
        if (e.state === 'encrypted') return resolve()
        checks++
        // Between batches: every read sees the same store as before the run.
        void readAll(m).then(
          (r) => (JSON.stringify(r) === JSON.stringify(EXPECTED) ? undefined : (failure ??= r)),
          (e) => (failure ??= e),
        )
      })
    })
    await m.encryption.rekey(await newKey())
    await done
    expect(checks).toBeGreaterThan(3)
    expect(failure).toBeUndefined()
    expect(await readAll(m)).toEqual(EXPECTED)
  })
})

describe('adopt', () => {
  it('adopts a database encrypted with the same key or a plain one; another key, or a plain store adopting an encrypted one, is crypto', async () => {
    const indexedDB = new IDBFactory()
    const key = await newKey()
    const make = async (userId: string, value: string, encryption?: { key: CryptoKey }) => {
      const m = await openMemory({ appId: 'adopt', userId, indexedDB, IDBKeyRange, ...(encryption ? { encryption } : {}) })
      await m.facts.set('user', userId, value)
      await m.close()
    }
    await make('same', 'same key value', { key })
    await make('other', 'other key value', { key: await newKey() })
    await make('plain', 'plain value')
    const me = await openMemory({ appId: 'adopt', userId: 'me', indexedDB, IDBKeyRange, encryption: { key } })
    open.push(me)
    await expect(me.adopt('other')).rejects.toMatchObject({ code: 'crypto' })
    await me.adopt('same')
    await me.adopt('plain')
    expect((await me.facts.get('user', 'same'))?.value).toBe('same key value')
    expect((await me.facts.get('user', 'plain'))?.value).toBe('plain value')
    const plainStore = await openMemory({ appId: 'adopt', userId: 'me2', indexedDB, IDBKeyRange })
    open.push(plainStore)
    await expect(plainStore.adopt('same')).rejects.toMatchObject({ code: 'crypto' })
  })
})
