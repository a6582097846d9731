import { afterEach, describe, expect, it } from 'vitest'
import { createLoopbackNetwork } from '@engram/sync'
import { closeAll, mirroredState, openReplica, settle, type Replica } from '../test/replicas.js'

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

describe('artifacts over sync', () => {
  it('mirror metadata, never bytes; attached bytes survive later metadata; a delete reaches the other device', async () => {
    const network = createLoopbackNetwork()
    const a = await openReplica('r0', network, { start: Date.UTC(2026, 0, 1) })
    const b = await openReplica('r1', network, { start: Date.UTC(2026, 0, 1) + 1 })
    open.push(a, b)
    const made = await a.memory.artifacts.put('p', { name: 'plan.md', mimeType: 'text/markdown', data: '# Plan', runId: 'run-1' })
    await settle(network, [a, b])
    expect(await b.memory.artifacts.get(made.id)).toEqual({ ...made, onDevice: false })
    expect((await b.memory.artifacts.list('p', { runId: 'run-1' })).items.map((x) => x.id)).toEqual([made.id])
    await b.memory.artifacts.attach(made.id, (await a.memory.artifacts.get(made.id))!.data!)
    expect(await mirroredState(a)).toEqual(await mirroredState(b))
    await a.memory.artifacts.delete(made.id)
    await settle(network, [a, b])
    expect(await b.memory.artifacts.get(made.id)).toBeUndefined()
    expect(await mirroredState(a)).toEqual(await mirroredState(b))
    expect([...a.errors, ...b.errors]).toEqual([])
  })
})
