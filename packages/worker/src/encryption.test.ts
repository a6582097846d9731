import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import type { EncryptionStatus } from '@engram/core'
import { connectMemory, exposeMemory } from '@engram/worker'
import { rawDump, whereFound } from '../../../test/support/raw-idb.js'

/*
 * At-rest encryption through the worker: the key crosses to the host by
 * structured clone (a non-extractable CryptoKey stays one), `memory.encryption`
 * is served there, its subscription proxied back, and a second connection
 * joining the open store must show the key too.
 */

let counter = 0
const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])

function host() {
  const indexedDB = new IDBFactory()
  const userId = `w${++counter}`
  const first = new MessageChannel()
  const h = exposeMemory({ endpoint: first.port1, memory: { indexedDB, IDBKeyRange }, locks: null })
  let used = false
  const port = () => {
    if (!used) {
      used = true
      return first.port2
    }
    const next = new MessageChannel()
    h.connect(next.port1)
    return next.port2
  }
  return { h, indexedDB, userId, port }
}

describe('connectMemory({ encryption })', () => {
  it('opens an encrypted store in the worker; nothing written is plain on disk', async () => {
    const { h, indexedDB, userId, port } = host()
    const key = await newKey()
    const memory = await connectMemory(port(), { appId: 'enc-worker', userId, encryption: { key } })
    await memory.facts.set('user', 'secretkeyzq', 'secretvaluezq', { tags: ['secrettagzq'] })
    const session = await memory.sessions.create('user')
    await memory.messages.appendExchange(session.id, 'secretquestionzq', 'secretanswerzq')
    expect((await memory.facts.get('user', 'secretkeyzq'))?.value).toBe('secretvaluezq')
    expect((await memory.search('user', 'secretquestionzq')).length).toBeGreaterThan(0)
    expect(await memory.encryption.status()).toEqual({ state: 'encrypted', generation: 1 })
    const dump = await rawDump(indexedDB)
    for (const canary of ['secretkeyzq', 'secretvaluezq', 'secrettagzq', 'secretquestionzq', 'secretanswerzq']) expect(whereFound(dump, canary)).toEqual([])
    await memory.close()
    h.close()
  })

  it('refuses a wrong or missing key with crypto, also for a connection joining the open store', async () => {
    const { h, userId, port } = host()
    const key = await newKey()
    const first = await connectMemory(port(), { appId: 'enc-worker', userId, encryption: { key } })
    await first.facts.set('user', 'k', 'v')
    await expect(connectMemory(port(), { appId: 'enc-worker', userId, encryption: { key: await newKey() } })).rejects.toMatchObject({ code: 'crypto' })
    await expect(connectMemory(port(), { appId: 'enc-worker', userId })).rejects.toMatchObject({ code: 'crypto' })
    // A malformed option is refused by name, in the page or in the worker, before the store is touched.
    for (const encryption of [null, 'key', { key, extra: 1 }, { key: 'not a key' }]) {
      await expect(connectMemory(port(), { appId: 'enc-worker', userId, encryption } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    const second = await connectMemory(port(), { appId: 'enc-worker', userId, encryption: { key } })
    expect((await second.facts.get('user', 'k'))?.value).toBe('v')
    await second.close()
    await first.close()
    h.close()
  })

  it('enable and rekey run in the worker, with progress events in the page', async () => {
    const { h, indexedDB, userId, port } = host()
    const memory = await connectMemory(port(), { appId: 'enc-worker', userId })
    for (let i = 0; i < 20; i++) await memory.facts.set('user', `plainkey${i}zq`, `plainvalue${i}zq`)
    const events: EncryptionStatus[] = []
    const off = await memory.encryption.subscribe((e) => events.push(e))
    const key = await newKey()
    await memory.encryption.enable(key)
    await memory.encryption.rekey(await newKey())
    await expect.poll(() => events.at(-1)).toEqual({ state: 'encrypted', generation: 2 })
    expect(events.some((e) => e.state === 'encrypting')).toBe(true)
    expect(events.some((e) => e.state === 'rekeying')).toBe(true)
    await off()
    expect(whereFound(await rawDump(indexedDB), 'plainvalue3zq')).toEqual([])
    expect((await memory.facts.get('user', 'plainkey3zq'))?.value).toBe('plainvalue3zq')
    await expect(memory.encryption.rekey('nope' as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.close()
    h.close()
  })
})
