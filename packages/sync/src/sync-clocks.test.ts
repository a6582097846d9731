import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import { compareHlc, readHlc } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, type LoopbackNetwork } from '@engram/sync'
import { closeAll, openReplica, settle, type Replica } from '../test/replicas.js'

const T = Date.UTC(2026, 0, 1)
const MIN = 60_000

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

async function pair(options: { maxClockLeadMs?: number } = {}) {
  const network = createLoopbackNetwork()
  const a = await openReplica('a', network, { start: T + 10 * MIN, ...options }) // a's clock is 10 minutes fast
  const b = await openReplica('b', network, { start: T, ...options })
  open.push(a, b)
  return { network, a, b }
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

describe('clocks between devices', () => {
  it('a device 10 minutes fast writes k; the other restarts and edits k: the restarted edit wins everywhere (within the drift bound)', async () => {
    const { network, a, b } = await pair({ maxClockLeadMs: 15 * MIN })
    await a.memory.facts.set('p', 'k', 'from a (fast clock)')
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from a (fast clock)')
    await b.reopen() // the clock of a reopened store starts from the highest stamp it holds, not from the wall clock
    await b.memory.facts.set('p', 'k', 'from b after restart')
    expect(compareHlc(await stampOf(b, 'k'), await stampOf(a, 'k'))).toBeGreaterThan(0)
    await settle(network, [a, b])
    expect((await a.memory.facts.get('p', 'k'))?.value).toBe('from b after restart')
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from b after restart')
    expect(await replicationOf(a.memory).pending()).toEqual([])
    expect(await replicationOf(b.memory).pending()).toEqual([])
    await b.reopen() // and it stays: nothing replaces it on the next start
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from b after restart')
    expect(a.errors).toEqual([])
    expect(b.errors).toEqual([])
  })

  it('beyond the drift bound a record is set aside, shown in details, does not move the clock, and a later local edit replaces it', async () => {
    const { network, a, b } = await pair() // default bound: 5 minutes
    await b.memory.facts.set('p', 'k', 'from b, first')
    await settle(network, [a, b])
    await a.memory.facts.set('p', 'k', 'from a (10 minutes fast)')
    await settle(network, [a, b])
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from b, first') // not applied
    const problems = b.sync.details('p').problems
    expect(problems.map((p) => [p.type, p.kind, p.id])).toEqual([['clock_ahead', 'facts', 'p/k']])
    expect(problems[0]!.message).toMatch(/leads this device's clock/)
    expect(b.errors.map((e) => (e as { code?: string }).code)).toEqual(['invalid_input'])

    b.clock.advance(1)
    await b.memory.facts.set('p', 'k', 'from b, later')
    expect(readHlc(await stampOf(b, 'k'))!.physical).toBe(T + 1) // the clock did not jump to a's
    await b.sync.flush()
    // b's edit is published (it replaced the entry set aside) and acked only then
    expect(await replicationOf(b.memory).pending()).toEqual([])
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from b, later')
    await settle(network, [a, b])
    // a still believes its own (fast) stamp; b keeps its edit and keeps showing the problem
    expect((await b.memory.facts.get('p', 'k'))?.value).toBe('from b, later')
    expect(b.sync.details('p').problems.map((p) => p.id)).toEqual(['p/k'])
  })

  it('a malformed stamp in the document is set aside and shown; the next local edit replaces it in the document', async () => {
    const network = createLoopbackNetwork()
    const b = await openReplica('b', network, { start: T })
    open.push(b)
    const r = rogue(network)
    r.write('k', 'wins forever?', '~')
    r.write('far', 'frozen clock?', '9999999999999.99999.x')
    await settle(network, [b])
    expect(await b.memory.facts.get('p', 'k')).toBeUndefined()
    expect(await b.memory.facts.get('p', 'far')).toBeUndefined()
    expect(
      b.sync
        .details('p')
        .problems.map((p) => [p.id, p.type])
        .sort(),
    ).toEqual([
      ['p/far', 'clock_ahead'],
      ['p/k', 'malformed_stamp'],
    ])
    await b.memory.facts.set('p', 'k', 'honest')
    await b.memory.facts.set('p', 'far', 'honest too')
    await settle(network, [b])
    expect(r.facts.get('p/k')?.value).toBe('honest')
    expect(r.facts.get('p/far')?.value).toBe('honest too')
    expect(readHlc(r.facts.get('p/far')?.hlc)!.physical).toBe(T)
    expect(b.sync.details('p').problems).toEqual([])
    expect(await replicationOf(b.memory).pending()).toEqual([])
  })
})
