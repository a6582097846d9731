import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import { MemoryError } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, deriveSyncKey, startSync, type LoopbackNetwork } from '@engram/sync'
import { closeAll, mirroredState, openReplica, settle, type Replica } from '../test/replicas.js'

const SECRET = 'zebra-kumquat-7731' // a distinctive fact value to look for in the document bytes
const T0 = Date.UTC(2026, 0, 1)

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

async function replica(name: string, network: LoopbackNetwork, options: Parameters<typeof openReplica>[2] = {}): Promise<Replica> {
  const r = await openReplica(name, network, { start: T0 + open.length, ...options })
  open.push(r)
  return r
}

/** A stock Yjs client in the room that sees every byte another device would get from the relay. */
function observer(network: LoopbackNetwork): Y.Doc {
  const doc = new Y.Doc()
  network.connector(`observer-${Math.random()}`)({ doc, room: 'u1/p', projectId: 'p', setStatus: () => {} })
  return doc
}

const codes = (r: Replica): string[] => r.errors.map((e) => (e instanceof MemoryError ? e.code : String(e)))
const contains = (bytes: Uint8Array, text: string): boolean => Buffer.from(bytes).includes(Buffer.from(text))

describe('end-to-end encryption of mirrored values', () => {
  it('two devices with the same passphrase converge; the document holds no plaintext value', async () => {
    const network = createLoopbackNetwork()
    const a = await replica('a', network, { encryption: { passphrase: 'correct horse' } })
    const b = await replica('b', network, { encryption: { passphrase: 'correct horse' } })
    await a.memory.facts.set('p', 'code', SECRET, { tags: ['secret-tag-88'] })
    await b.memory.blocks.set('p', 'persona', `persona ${SECRET}`)
    await a.memory.summaries.create('p', { kind: 'project', text: `summary ${SECRET}` })
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'code'))?.value).toBe(SECRET)
    expect((await a.memory.blocks.get('p', 'persona'))?.value).toBe(`persona ${SECRET}`)
    expect((await b.memory.summaries.latest('p'))?.text).toBe(`summary ${SECRET}`)
    expect(await mirroredState(a)).toEqual(await mirroredState(b))
    // concurrent edits still converge on the latest HLC (the stamp stays in clear)
    network.disconnect('a')
    b.clock.advance(50)
    await b.memory.facts.set('p', 'code', 'b newer')
    await a.memory.facts.set('p', 'code', 'a older')
    network.reconnect('a')
    await settle(network, [a, b])
    expect((await a.memory.facts.get('p', 'code'))?.value).toBe('b newer')
    expect(await mirroredState(a)).toEqual(await mirroredState(b))

    const bytes = Y.encodeStateAsUpdate(observer(network))
    await network.settle()
    const state = Y.encodeStateAsUpdate(observer(network))
    for (const update of [bytes, state]) {
      expect(contains(update, 'p/code')).toBe(true) // entry ids stay readable (Yjs merges by them)
      expect(contains(update, SECRET)).toBe(false)
      expect(contains(update, 'secret-tag-88')).toBe(false)
      expect(contains(update, 'b newer')).toBe(false)
    }
    expect(a.errors).toEqual([])
    expect(b.errors).toEqual([])
  })

  it('a device with the wrong key reports crypto and error, writes nothing, and leaves the others untouched', async () => {
    const network = createLoopbackNetwork()
    const key = await deriveSyncKey('right', 'u1')
    const a = await replica('a', network, { encryption: { key } })
    const b = await replica('b', network, { encryption: { key } })
    await a.memory.facts.set('p', 'k', 'from a')
    await settle(network, [a, b])
    const c = await replica('c', network, { encryption: { passphrase: 'wrong' } })
    c.clock.advance(10_000)
    await c.memory.facts.set('p', 'k', 'from c (newer, wrong key)')
    await c.memory.facts.set('p', 'only-c', 1)
    await settle(network, [a, b, c])
    expect(c.sync.status('p')).toBe('error')
    expect(codes(c)).toEqual(['crypto'])
    expect(String((c.errors[0] as Error).message)).toMatch(/wrong passphrase|key/)
    expect((await c.memory.facts.get('p', 'k'))?.value).toBe('from c (newer, wrong key)') // nothing applied on c
    expect(await replicationOf(c.memory).pending()).toHaveLength(2) // kept for when the key is right
    for (const r of [a, b]) {
      expect((await r.memory.facts.get('p', 'k'))?.value).toBe('from a')
      expect(await r.memory.facts.get('p', 'only-c')).toBeUndefined()
      expect(r.errors).toEqual([])
      expect(r.sync.status('p')).toBe('synced')
    }
    // a and b keep syncing with each other; c stays out
    await b.memory.facts.set('p', 'later', 'b')
    await settle(network, [a, b, c])
    expect((await a.memory.facts.get('p', 'later'))?.value).toBe('b')
    expect(await c.memory.facts.get('p', 'later')).toBeUndefined()
    expect(c.sync.status('p')).toBe('error')
    // restarted with the right key, c catches up and publishes what it kept (its HLC is newest)
    await c.sync.close()
    c.errors.length = 0
    c.sync = startSync(c.memory, { connect: network.connector('c'), docName: (p) => `fixed:c:${p}`, encryption: { key }, onError: (e) => c.errors.push(e) })
    await settle(network, [a, b, c])
    expect((await a.memory.facts.get('p', 'k'))?.value).toBe('from c (newer, wrong key)')
    expect((await c.memory.facts.get('p', 'later'))?.value).toBe('b')
    expect(await mirroredState(a)).toEqual(await mirroredState(c))
    expect(c.errors).toEqual([])
  })

  it('a device without encryption joining an encrypted project gets a clear crypto error and publishes nothing', async () => {
    const network = createLoopbackNetwork()
    const a = await replica('a', network, { encryption: { passphrase: 'pw' } })
    await a.memory.facts.set('p', 'k', SECRET)
    await settle(network, [a])
    const plain = await replica('plain', network)
    plain.clock.advance(10_000)
    await plain.memory.facts.set('p', 'k', 'plain text, newer')
    await settle(network, [a, plain])
    expect(plain.sync.status('p')).toBe('error')
    expect(codes(plain)).toEqual(['crypto'])
    expect(String((plain.errors[0] as Error).message)).toMatch(/encrypted/)
    expect((await a.memory.facts.get('p', 'k'))?.value).toBe(SECRET)
    expect(a.errors).toEqual([])
    expect(contains(Y.encodeStateAsUpdate(observer(network)), 'plain text, newer')).toBe(false)
  })

  it('a plain project that a device starts encrypting: the plain side turns to crypto error, no silent divergence', async () => {
    const network = createLoopbackNetwork()
    const plain = await replica('plain', network)
    await plain.memory.facts.set('p', 'old', 'written in clear')
    await settle(network, [plain])
    const enc = await replica('enc', network, { encryption: { passphrase: 'pw' } })
    await settle(network, [plain, enc])
    // the encrypting device skips the clear value (never trusts it) and says so
    expect(codes(enc)).toContain('crypto')
    expect(await enc.memory.facts.get('p', 'old')).toBeUndefined()
    // the plain device learns the project is encrypted now and stops
    expect(plain.sync.status('p')).toBe('error')
    expect(codes(plain)).toEqual(['crypto'])
    await plain.memory.facts.set('p', 'after', 'not published')
    await settle(network, [plain, enc])
    expect(await enc.memory.facts.get('p', 'after')).toBeUndefined()
  })

  it('a plain device that synced before the project was encrypted, and comes back with an offline write, overwrites nothing', async () => {
    const network = createLoopbackNetwork()
    const plain = await replica('plain', network, { docPrefix: 'back' })
    await plain.memory.facts.set('p', 'k', 'clear v1')
    await settle(network, [plain])
    network.disconnect('plain')
    await plain.sync.close() // the app closes while offline; its document stays in IndexedDB
    plain.clock.advance(60_000)
    await plain.memory.facts.set('p', 'k', 'clear v2, written offline')
    const enc = await replica('enc', network, { encryption: { passphrase: 'pw' } })
    await enc.memory.facts.set('p', 'other', 'sealed')
    await settle(network, [enc])
    expect(enc.errors).toEqual([]) // plain was away: enc has not seen its clear value yet
    await plain.restart() // same document (not empty, no key check): waits for the relay before publishing
    await settle(network, [plain, enc])
    network.reconnect('plain')
    await settle(network, [plain, enc])
    expect(plain.sync.status('p')).toBe('error')
    expect(codes(plain)).toEqual(['crypto'])
    expect(await replicationOf(plain.memory).pending()).toHaveLength(1) // kept, not published
    expect(contains(Y.encodeStateAsUpdate(observer(network)), 'clear v2')).toBe(false)
    // the old clear value reached enc with plain's document: skipped and reported, never applied
    expect(codes(enc)).toEqual(['crypto'])
    expect(await enc.memory.facts.get('p', 'k')).toBeUndefined()
    expect((await enc.memory.facts.get('p', 'other'))?.value).toBe('sealed')
  })

  it('a sealed value moved to another entry by whoever holds the document does not open (bound to its id and HLC)', async () => {
    const network = createLoopbackNetwork()
    const a = await replica('a', network, { encryption: { passphrase: 'pw' } })
    const b = await replica('b', network, { encryption: { passphrase: 'pw' } })
    await a.memory.facts.set('p', 'x', 'value of x')
    await settle(network, [a, b])
    const rogue = observer(network)
    await network.settle()
    const facts = new YKeyValue<{ hlc: string; sealed: Uint8Array }>(rogue.getArray('facts'))
    const stolen = facts.get('p/x')!
    expect(stolen.sealed).toBeInstanceOf(Uint8Array)
    facts.set('p/y', { ...stolen, hlc: stolen.hlc.replace(/^\d+/, (t) => String(Number(t) + 1)) })
    await settle(network, [a, b])
    expect(await b.memory.facts.get('p', 'y')).toBeUndefined()
    expect(codes(b)).toEqual(['crypto'])
    expect(b.sync.status('p')).toBe('error')
    a.errors.length = 0
    b.errors.length = 0
  })

  it('rejects a malformed encryption option before starting', async () => {
    const network = createLoopbackNetwork()
    const a = await replica('a', network)
    const connect = network.connector('x')
    expect(() => startSync(a.memory, { connect, encryption: { passphrase: '' } })).toThrow(/passphrase/)
    expect(() => startSync(a.memory, { connect, encryption: { key: 'not a key' } as never })).toThrow(/CryptoKey/)
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    expect(() => startSync(a.memory, { connect, encryption: { key: hmac } })).toThrow(/AES-GCM/)
  })
})
