import { afterEach, describe, expect, it } from 'vitest'
import { formatHlc, type Change } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork } from '@engram/sync'
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

describe('patterns over sync', () => {
  it('mirror an observed pattern to the other device, which reinforces it in turn', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    const seen: Change[] = []
    await b!.memory.changes.subscribe({ kinds: ['patterns'] }, (batch) => void seen.push(...batch))
    await a!.memory.patterns.observe('p', 'Orders coffee on Mondays', { confidence: 0.5 })
    await settle(network, [a!, b!])
    expect(await b!.memory.patterns.list('p')).toMatchObject([{ text: 'Orders coffee on Mondays', confidence: 0.5, observations: 1 }])
    expect(seen).toMatchObject([{ kind: 'patterns', op: 'put', origin: 'remote', projectId: 'p' }])
    // b builds on what arrived; a sees the reinforced pattern
    await b!.memory.patterns.observe('p', 'orders coffee on mondays!', { confidence: 0.5 })
    await settle(network, [a!, b!])
    expect(await a!.memory.patterns.list('p')).toMatchObject([{ text: 'orders coffee on mondays!', confidence: 0.75, observations: 2 }])
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
    expect((await a!.memory.context.build('p', { budget: 200 })).sections.map((s) => s.name)).toEqual(['patterns'])
    expect(a!.errors).toEqual([])
    expect(b!.errors).toEqual([])
  })

  it('converge concurrent observations of one pattern on the latest clock', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    network.disconnect('r0')
    await a!.memory.patterns.observe('p', 'Walks at noon', { confidence: 0.2 })
    await b!.memory.patterns.observe('p', 'walks at NOON', { confidence: 0.9 }) // b's clock is 1 ms ahead
    network.reconnect('r0')
    await settle(network, [a!, b!])
    for (const r of [a!, b!]) expect(await r.memory.patterns.list('p')).toMatchObject([{ text: 'walks at NOON', confidence: 0.9 }])
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
  })

  it('carry a delete to the other device as a tombstone', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await a!.memory.patterns.observe('p', 'Naps after lunch', { confidence: 0.8 })
    await settle(network, [a!, b!])
    expect(await b!.memory.patterns.list('p')).toHaveLength(1)
    await b!.memory.patterns.delete('p', 'naps after lunch')
    await settle(network, [a!, b!])
    expect(await a!.memory.patterns.list('p')).toEqual([])
    expect(await mirroredState(a!)).toEqual(await mirroredState(b!))
  })

  it('stay local in a project whose sync is off, and go through the outbox once it is on', async () => {
    const {
      network,
      list: [a, b],
    } = await replicas(2)
    await a!.memory.projects.create({ id: 'q', name: 'Q' })
    await a!.memory.patterns.observe('q', 'Local only')
    expect(await replicationOf(a!.memory).pending({ projectId: 'q' })).toEqual([])
    await a!.memory.patterns.observe('p', 'Shared')
    const pending = await replicationOf(a!.memory).pending({ projectId: 'p' })
    expect(pending.map((e) => [e.kind, e.record?.row.text])).toEqual([['patterns', 'Shared']])
    await settle(network, [a!, b!])
    expect(await b!.memory.patterns.list('q')).toEqual([])
  })

  it('refuse malformed remote pattern records and keep the rest of the batch', async () => {
    const {
      list: [a],
    } = await replicas(1)
    const replication = replicationOf(a!.memory)
    const hlc = formatHlc(Date.UTC(2026, 0, 1), 0, 'remotedevice')
    const good = {
      kind: 'patterns' as const,
      projectId: 'p',
      id: 'p/hums%20a%20tune',
      hlc,
      row: { text: 'Hums a tune', confidence: 0.8, observations: 1, createdAt: 1, updatedAt: 1, projectId: 'p' },
    }
    const badId = { ...good, id: 'p/other' }
    const badConfidence = { ...good, row: { ...good.row, confidence: 2 } }
    const unknownField = { ...good, row: { ...good.row, mood: 'happy' } }
    const noWords = { ...good, id: 'p/', row: { ...good.row, text: '!!!' } }
    const result = await replication.applyRemote([badId, badConfidence, unknownField, noWords, good])
    expect(result.rejected).toHaveLength(4)
    expect(result.applied).toBe(1)
    expect(await a!.memory.patterns.list('p')).toMatchObject([{ text: 'Hums a tune', confidence: 0.8 }])
  })
})
