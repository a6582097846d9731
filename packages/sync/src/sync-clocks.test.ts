import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import { compareHlc, type MemoryStatus, readHlc, type StampsAheadWarning } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, type LoopbackNetwork, type SyncOptions } from '@engram/sync'
import { testClock } from '../../../test/support/memory.js'
import { closeAll, openReplica, settle, type Replica } from '../test/replicas.js'

const T = Date.UTC(2026, 0, 1)
const MIN = 60_000
const HOUR = 60 * MIN

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

/** Devices on one loopback network (no relay clock), each with its clock off by the given skew. */
async function devices<K extends string>(skews: Record<K, number>): Promise<{ network: LoopbackNetwork } & Record<K, Replica>> {
  const network = createLoopbackNetwork()
  const out = {} as Record<K, Replica>
  for (const [name, skew] of Object.entries(skews) as Array<[K, number]>) {
    out[name] = await openReplica(name, network, { start: T + skew })
    open.push(out[name])
  }
  return { network, ...out }
}

/** A foreign client in the room that writes raw entries into the document. */
function rogue(network: LoopbackNetwork) {
  const doc = new Y.Doc()
  network.connector('rogue')({ doc, room: 'u1/p', projectId: 'p', setStatus: () => {} })
  const facts = new YKeyValue<{ hlc: string; value: unknown }>(doc.getArray('facts'))
  return {
    facts,
    write(key: string, value: unknown, hlc: string) {
      facts.set(`p/${key}`, { value, confidence: 1, tags: [], createdAt: T, updatedAt: T, hlc } as never)
    },
  }
}

const stampOf = async (replica: Replica, key: string): Promise<string> =>
  (await replicationOf(replica.memory).snapshot('p')).records.find((r) => r.row.key === key)!.hlc
const factValue = async (replica: Replica, key: string): Promise<unknown> => (await replica.memory.facts.get('p', key))?.value
const problemsOf = (replica: Replica) => replica.sync.details('p').problems.map((p) => [p.type, p.id])

/** Resolves with the replica's `stamps_ahead` warning once it shows one that passes `test` (it is shown as it loads). */
async function stampsAhead(replica: Replica, test: (w: StampsAheadWarning) => boolean = () => true): Promise<StampsAheadWarning> {
  let found!: (w: StampsAheadWarning) => void
  const shown = new Promise<StampsAheadWarning>((resolve) => {
    found = resolve
  })
  const check = (status: MemoryStatus): void => {
    const w = status.warnings.find((x): x is StampsAheadWarning => x.type === 'stamps_ahead')
    if (w && test(w)) found(w)
  }
  const off = await replica.memory.status.subscribe(check)
  check(await replica.memory.status.get())
  const warning = await shown
  await off()
  return warning
}

/**
 * Issue 28, failure 1: acceptance of a remote record never depends on the receiver's clock.
 * Every device applies every well-formed record by the same rule (latest stamp wins, ties by
 * device id), so devices that received the same updates agree, whatever their clocks.
 */
describe('clocks between devices: convergence never depends on the receiver', () => {
  it('a device 10 minutes fast writes k: the other applies it and lists it; its later edit of k wins on both, for good', async () => {
    const { network, a, b } = await devices({ a: 10 * MIN, b: 0 })
    await b!.memory.facts.set('p', 'k', 'from b, first')
    await settle(network, [a!, b!])
    await a!.memory.facts.set('p', 'k', 'from a (10 minutes fast)')
    await settle(network, [a!, b!])
    expect(await factValue(b!, 'k')).toBe('from a (10 minutes fast)')
    // Listed where it arrived, not set aside; the app can show it.
    expect(problemsOf(b!)).toEqual([['clock_ahead', 'p/k']])
    expect(b!.sync.details('p').problems[0]!.message).toMatch(/ahead of this device's clock/)
    expect(b!.sync.status('p')).toBe('synced')

    b!.clock.advance(1)
    await b!.memory.facts.set('p', 'k', 'from b, later')
    // b's clock did not jump 10 minutes: only the edit of k is stamped after the stamp it replaces.
    expect(compareHlc(await stampOf(b!, 'k'), await stampOf(a!, 'k'))).toBeGreaterThan(0)
    await b!.memory.facts.set('p', 'other', 'b keeps its own time')
    expect(readHlc(await stampOf(b!, 'other'))!.physical).toBe(T + 1)
    await settle(network, [a!, b!])
    expect(await factValue(a!, 'k')).toBe('from b, later')
    expect(await factValue(b!, 'k')).toBe('from b, later')
    expect(problemsOf(b!)).toEqual([['clock_ahead', 'p/k']]) // the new stamp follows the fast one: still ahead here
    await b!.reopen()
    await a!.restart()
    await settle(network, [a!, b!])
    expect(await factValue(a!, 'k')).toBe('from b, later')
    expect(await factValue(b!, 'k')).toBe('from b, later')
    expect(await replicationOf(a!.memory).pending()).toEqual([])
    expect(await replicationOf(b!.memory).pending()).toEqual([])
  })

  it('a device an hour slow sees every fact of the others, and its later edit wins', async () => {
    const { network, a, slow } = await devices({ a: 0, slow: -HOUR })
    await a!.memory.facts.set('p', 'k', 'from a')
    await a!.memory.facts.set('p', 'j', 'only a')
    await settle(network, [a!, slow!])
    expect(await factValue(slow!, 'k')).toBe('from a')
    expect(await factValue(slow!, 'j')).toBe('only a')
    await slow!.memory.facts.set('p', 'k', 'from slow, later')
    await settle(network, [a!, slow!])
    expect(await factValue(a!, 'k')).toBe('from slow, later')
    expect(await factValue(slow!, 'k')).toBe('from slow, later')
    // Its clock fixed (the hour comes back), nothing changes: the stamps already say which edit came last.
    slow!.clock.advance(HOUR)
    await slow!.reopen()
    await settle(network, [a!, slow!])
    expect(await factValue(a!, 'k')).toBe('from slow, later')
    expect(await factValue(slow!, 'k')).toBe('from slow, later')
  })

  it('4 minutes fast, correct and 2 minutes slow: the slow device takes the correct one’s edit made after seeing the fast one', async () => {
    const { network, fast, b, slow } = await devices({ fast: 4 * MIN, b: 0, slow: -2 * MIN })
    await fast!.memory.facts.set('p', 'x', 'from fast')
    await settle(network, [fast!, b!, slow!])
    await b!.memory.facts.set('p', 'k', 'from b, after seeing fast')
    await settle(network, [fast!, b!, slow!])
    for (const r of [fast!, b!, slow!]) {
      expect(await factValue(r, 'k'), r.name).toBe('from b, after seeing fast')
      expect(await factValue(r, 'x'), r.name).toBe('from fast')
    }
  })

  it('messages from a fast device are applied and listed on the project, never set aside', async () => {
    const { network, a, fast } = await devices({ a: 0, fast: 10 * MIN })
    for (const r of [a!, fast!]) await r.memory.projects.setSync('p', { messages: true })
    await settle(network, [a!, fast!])
    const s = await a!.memory.sessions.create('p')
    await a!.memory.messages.append(s.id, { role: 'user', content: 'from a' })
    await settle(network, [a!, fast!])
    await fast!.memory.messages.append(s.id, { role: 'assistant', content: 'from fast' })
    await settle(network, [a!, fast!])
    expect((await a!.memory.messages.tail(s.id, 10)).map((m) => m.content)).toEqual(['from a', 'from fast'])
    expect(a!.sync.details('p').problems.map((p) => p.type)).toEqual(['clock_ahead'])
    expect(a!.sync.details('p').problems[0]!.kind).toBe('messages')
  })

  it('a far-future stamp (a device at 2099) does not freeze the key: the next edit on any device wins, and the clock stays', async () => {
    const { network, a, b } = await devices({ a: 0, b: 0 })
    const r = rogue(network)
    r.write('k', 'from 2099', `${Date.UTC(2099, 0, 1)}.00000.x`)
    await settle(network, [a!, b!])
    expect(await factValue(a!, 'k')).toBe('from 2099')
    expect(await factValue(b!, 'k')).toBe('from 2099')
    expect(problemsOf(a!)).toEqual([['clock_ahead', 'p/k']])
    a!.clock.advance(5)
    await a!.memory.facts.set('p', 'k', 'from a, now')
    await settle(network, [a!, b!])
    expect(await factValue(b!, 'k')).toBe('from a, now')
    expect(r.facts.get('p/k')?.value).toBe('from a, now')
    b!.clock.advance(10)
    await b!.memory.facts.set('p', 'k', 'from b, later still')
    await settle(network, [a!, b!])
    expect(await factValue(a!, 'k')).toBe('from b, later still')
    // Neither clock moved to 2099: other keys keep real time.
    await a!.memory.facts.set('p', 'j', 1)
    expect(readHlc(await stampOf(a!, 'j'))!.physical).toBe(T + 5)
    await a!.reopen()
    await a!.memory.facts.set('p', 'i', 1)
    expect(readHlc(await stampOf(a!, 'i'))!.physical).toBe(T + 5)
  })

  it('a device at 2099: its edits are listed in a stamps_ahead warning on every other device, never set aside; the next edit elsewhere wins', async () => {
    const FUTURE = Date.UTC(2099, 0, 1)
    const { network, a, b, future } = await devices({ a: 0, b: 0, future: FUTURE - T })
    for (const r of [a!, b!, future!]) await r.memory.projects.setSync('p', { messages: true })
    await settle(network, [a!, b!, future!])
    const s = await a!.memory.sessions.create('p')
    await settle(network, [a!, b!, future!])
    await future!.memory.facts.set('p', 'k', 'from 2099')
    await future!.memory.blocks.set('p', 'persona', 'from 2099')
    await future!.memory.messages.append(s.id, { role: 'user', content: 'from 2099' })
    await settle(network, [a!, b!, future!])
    const device = replicationOf(future!.memory).deviceId
    const stamp = async (r: Replica, kind: string, id: string) =>
      (await replicationOf(r.memory).snapshot('p')).records.find((x) => x.kind === kind && x.id === id)?.hlc
    for (const r of [a!, b!]) {
      expect(await factValue(r, 'k'), r.name).toBe('from 2099') // applied, not set aside
      const warning = await stampsAhead(r, (w) => w.count === 3)
      expect(
        (await r.memory.status.get()).warnings.map((w) => w.type),
        r.name,
      ).toEqual(['stamps_ahead'])
      expect(
        warning.records.map((x) => [x.kind, x.name, x.deviceId, readHlc(x.hlc)!.physical >= FUTURE]),
        r.name,
      ).toEqual(
        expect.arrayContaining([
          ['facts', 'k', device, true],
          ['blocks', 'persona', device, true],
          ['messages', undefined, device, true],
        ]),
      )
      expect(warning.records.find((x) => x.kind === 'facts')).toMatchObject({ projectId: 'p', id: 'p/k', hlc: await stamp(future!, 'facts', 'p/k') })
      expect(warning.message).toMatch(/3 synced records carry stamps far ahead of this device's clock/)
      expect(warning.message).toContain(device)
      // sync.details() lists them on the project, with the device they name
      expect((await r.memory.sync.details('p')).problems.filter((p) => p.type === 'clock_ahead').map((p) => [p.kind, p.deviceId])).toEqual(
        expect.arrayContaining([
          ['facts', device],
          ['blocks', device],
          ['messages', device],
        ]),
      )
      expect(r.sync.status('p')).toBe('synced')
    }
    // The device at 2099 cannot tell: its own clock says the stamps are now.
    expect((await future!.memory.status.get()).warnings).toEqual([])
    // The next edit on another device wins everywhere; the clock of no other device moved to 2099.
    a!.clock.advance(1)
    await a!.memory.facts.set('p', 'k', 'from a, later')
    await b!.memory.blocks.set('p', 'persona', 'from b, later')
    await settle(network, [a!, b!, future!])
    for (const r of [a!, b!, future!]) {
      expect(await factValue(r, 'k'), r.name).toBe('from a, later')
      expect((await r.memory.blocks.get('p', 'persona'))?.value, r.name).toBe('from b, later')
    }
    await a!.memory.facts.set('p', 'j', 1)
    expect(readHlc(await stampOf(a!, 'j'))!.physical).toBeLessThan(FUTURE)
    // The edits that won follow the 2099 stamps (a key is never frozen): still listed, now naming their writers.
    const fromA = replicationOf(a!.memory).deviceId
    const after = await stampsAhead(b!, (w) => w.records.some((x) => x.kind === 'facts' && x.deviceId === fromA))
    expect(after.records.map((x) => [x.kind, x.deviceId])).toEqual(
      expect.arrayContaining([
        ['facts', replicationOf(a!.memory).deviceId],
        ['blocks', replicationOf(b!.memory).deviceId],
        ['messages', device],
      ]),
    )
    // Sync stopped: the warning goes with it.
    await b!.sync.close()
    expect((await b!.memory.status.get()).warnings).toEqual([])
  })

  it('a malformed stamp is never applied anywhere, and a device that holds the key restores it in the document', async () => {
    const { network, a } = await devices({ a: 0 })
    await a!.memory.facts.set('p', 'k', 'honest')
    await settle(network, [a!])
    const r = rogue(network)
    r.write('k', 'wins forever?', '~')
    await settle(network, [a!])
    expect(await factValue(a!, 'k')).toBe('honest')
    expect(r.facts.get('p/k')?.value).toBe('honest') // republished: a device joining now gets the same value
    const late = await openReplica('late', network, { start: T })
    open.push(late)
    await settle(network, [a!, late])
    expect(await factValue(late, 'k')).toBe('honest')
    expect(problemsOf(a!)).toEqual([])
  })
})

/** With the relay's clock (the loopback plays it), each device learns its offset: the edit made later in real time wins. */
describe("clocks between devices that learn the relay's time", () => {
  /** Devices whose wall clocks are real time plus their skew, on a loopback relay that tells real time. */
  async function clocked<K extends string>(skews: Record<K, number>, options: Partial<SyncOptions> = {}) {
    const real = testClock(T)
    const skew = { ...skews } as Record<string, number>
    const network = createLoopbackNetwork({ relayTime: () => real.now() })
    const out = {} as Record<K, Replica>
    for (const name of Object.keys(skews) as K[]) {
      const clock = { now: () => real.now() + skew[name]!, advance: (ms: number) => real.advance(ms), set: (t: number) => real.set(t - skew[name]!) }
      out[name] = await openReplica(name, network, { clock, ...options })
      open.push(out[name])
    }
    return { real, network, skew, ...out }
  }

  it('a device 10 minutes fast stamps with real time once it has read the relay, and warns; the later edit wins', async () => {
    const { real, network, fast, right } = await clocked({ fast: 10 * MIN, right: 0 })
    await settle(network, [fast, right])
    expect((await fast.memory.status.get()).warnings).toEqual([expect.objectContaining({ type: 'clock', offsetMs: -10 * MIN })])
    await fast.memory.facts.set('p', 'k', 'from fast')
    expect(readHlc(await stampOf(fast, 'k'))!.physical).toBe(T)
    real.advance(1)
    await right.memory.facts.set('p', 'k', 'from right, 1 ms later')
    await settle(network, [fast, right])
    expect([await factValue(fast, 'k'), await factValue(right, 'k')]).toEqual(['from right, 1 ms later', 'from right, 1 ms later'])
    expect([...fast.sync.details('p').problems, ...right.sync.details('p').problems]).toEqual([])
  })

  it('edits made offline after the clock jumped ahead go out at their real time when the device reconnects, in their order', async () => {
    const { real, network, skew, a, b } = await clocked({ a: 0, b: 0 })
    await settle(network, [a, b])
    network.disconnect('a')
    skew.a = 6 * HOUR // the clock jumps while the device is offline
    await a.memory.facts.set('p', 'k', 'from a, offline')
    real.advance(1)
    await a.memory.blocks.set('p', 'persona', 'from a, offline')
    real.advance(1)
    await b.memory.facts.set('p', 'k', 'from b, later')
    expect(readHlc(await stampOf(a, 'k'))!.physical).toBe(T + 6 * HOUR) // stamped with the wrong clock, waiting in the outbox
    network.reconnect('a')
    await settle(network, [a, b])
    // Stamped again when a read the relay's time: a's edit was earlier in real time, b's wins.
    expect([await factValue(a, 'k'), await factValue(b, 'k')]).toEqual(['from b, later', 'from b, later'])
    expect((await b.memory.blocks.get('p', 'persona'))?.value).toBe('from a, offline')
    const persona = (await replicationOf(b.memory).snapshot('p')).records.find((r) => r.kind === 'blocks')!
    expect(readHlc(persona.hlc)!.physical).toBe(T + 1)
    expect((await a.memory.status.get()).warnings.map((w) => w.type)).toEqual(['clock'])
    // and a's next edit is at real time again (its clock left the wrong stamps behind)
    real.advance(1)
    await a.memory.facts.set('p', 'j', 1)
    expect(readHlc(await stampOf(a, 'j'))!.physical).toBe(T + 3)
    expect([...a.sync.details('p').problems, ...b.sync.details('p').problems]).toEqual([])
  })

  it('documents that read the relay time at once correct the clock once: a message written offline after a jump keeps its place', async () => {
    // End-to-end encrypted: sealing makes the documents reconnect at the same time.
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
    const { real, network, skew, a, b } = await clocked({ a: 0, b: 0 }, { encryption: { key } })
    for (const r of [a, b]) await r.memory.projects.setSync('p', { messages: true })
    const sessions = [await a.memory.sessions.create('p'), await a.memory.sessions.create('p')].map((s) => s.id)
    await settle(network, [a, b])
    network.disconnect('a')
    real.advance(1)
    await b.memory.messages.append(sessions[1]!, { role: 'user', content: 'b, first' })
    skew.a = 5 * MIN + 1
    real.advance(1)
    await a.memory.messages.append(sessions[1]!, { role: 'user', content: 'a, offline, after' })
    network.reconnect('a')
    await settle(network, [a, b])
    for (const r of [a, b])
      expect(
        (await r.memory.messages.tail(sessions[1]!, 10)).map((m) => m.content),
        r.name,
      ).toEqual(['b, first', 'a, offline, after'])
    expect(replicationOf(a.memory).clockOffset()).toBe(-(5 * MIN + 1))
  })
  it('a clock within a second of the relay keeps no offset and jittery readings move none; a clock off by seconds is learned and its edits keep real-time order', async () => {
    const real = testClock(T)
    const skew: Record<string, number> = { a: 0, b: -400 }
    let jitter = 0
    const network = createLoopbackNetwork({ relayTime: () => real.now() + jitter })
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        openReplica(name, network, {
          clock: { now: () => real.now() + skew[name]!, advance: (ms) => real.advance(ms), set: (t) => real.set(t - skew[name]!) },
        }),
      ),
    )
    open.push(a!, b!)
    for (const r of [a!, b!]) await r.memory.projects.setSync('p', { messages: true })
    const s = await a!.memory.sessions.create('p')
    await settle(network, [a!, b!])
    // 400 ms slow cannot be told from the network's delay: no offset, on both.
    expect([replicationOf(a!.memory).clockOffset(), replicationOf(b!.memory).clockOffset()]).toEqual([0, 0])
    // Readings that jitter by up to 500 ms move neither offset (b reads up to 900 ms): nothing is stamped again, nothing reorders.
    for (const j of [500, -500, 350]) {
      jitter = j
      network.heartbeat()
      await settle(network, [a!, b!])
      expect([replicationOf(a!.memory).clockOffset(), replicationOf(b!.memory).clockOffset()], `jitter ${j}`).toEqual([0, 0])
    }
    jitter = 0
    real.advance(1)
    await a!.memory.messages.append(s.id, { role: 'user', content: 'a, first' })
    real.advance(1_000) // more than b's error apart: real-time order holds
    await b!.memory.messages.append(s.id, { role: 'assistant', content: 'b, a second later' })
    // b's clock falls 3 s behind: learned at the next reading; its next edit keeps real-time order.
    skew.b = -3_400
    network.heartbeat()
    await settle(network, [a!, b!])
    expect(replicationOf(b!.memory).clockOffset()).toBe(3_400)
    real.advance(1)
    await a!.memory.messages.append(s.id, { role: 'user', content: 'a, third' })
    real.advance(1)
    await b!.memory.messages.append(s.id, { role: 'assistant', content: 'b, fourth' })
    await b!.memory.facts.set('p', 'k', 'from b')
    real.advance(1)
    await a!.memory.facts.set('p', 'k', 'from a, 1 ms later')
    await settle(network, [a!, b!])
    for (const r of [a!, b!]) {
      expect(
        (await r.memory.messages.tail(s.id, 10)).map((m) => m.content),
        r.name,
      ).toEqual(['a, first', 'b, a second later', 'a, third', 'b, fourth'])
      expect(await factValue(r, 'k'), r.name).toBe('from a, 1 ms later')
    }
    expect((await b!.memory.status.get()).warnings).toEqual([]) // 3.4 s is within the bound
  })
})
