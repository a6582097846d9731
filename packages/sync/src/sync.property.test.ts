import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { compareHlc, type MirroredRecord } from '@engram/core'
import { createLoopbackNetwork, type SyncOptions } from '@engram/sync'
import { closeAll, openReplica, settle, type Replica } from '../test/replicas.js'

const KEYS = ['a', 'b', 'c']
const LABELS = ['persona', 'human']

type Op =
  | { t: 'set'; r: number; key: string; value: number }
  | { t: 'delete' | 'restore'; r: number; key: string }
  | { t: 'block'; r: number; label: string; value: string }
  | { t: 'blockDelete'; r: number; label: string }
  | { t: 'summary'; r: number; text: string }
  | { t: 'advance'; r: number; ms: number }
  | { t: 'cut' | 'heal' | 'restart'; r: number }
  | { t: 'deliver' }

const op = (replicas: number): fc.Arbitrary<Op> => {
  const r = fc.integer({ min: 0, max: replicas - 1 })
  const key = fc.constantFrom(...KEYS)
  const label = fc.constantFrom(...LABELS)
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ t: fc.constant('set' as const), r, key, value: fc.integer({ min: 0, max: 99 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('delete' as const, 'restore' as const), r, key }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('block' as const), r, label, value: fc.string({ maxLength: 8 }) }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('blockDelete' as const), r, label }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('summary' as const), r, text: fc.string({ minLength: 1, maxLength: 8 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), r, ms: fc.integer({ min: 0, max: 50 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('cut' as const, 'heal' as const), r }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), r }) },
    { weight: 2, arbitrary: fc.constant({ t: 'deliver' as const }) },
  )
}

const scenario = fc.integer({ min: 2, max: 4 }).chain((n) => fc.record({ n: fc.constant(n), ops: fc.array(op(n), { minLength: 1, maxLength: 40 }) }))

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

async function recordsOf(replica: Replica): Promise<Map<string, MirroredRecord>> {
  const { records } = await replica.memory.replication.snapshot('p')
  return new Map(records.map((r) => [`${r.kind}:${r.id}`, r]))
}

// The same property with values in clear and end-to-end encrypted (one key for every replica; fewer runs: sealing is slower).
const variants: Array<[string, () => Promise<Partial<SyncOptions>>, number]> = [
  ['in clear', async () => ({}), 20],
  ['encrypted', async () => ({ encryption: { key: await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) } }), 4],
]

describe.each(variants)('sync convergence (property, %s)', (variant, syncOptions, defaultRuns) => {
  it('2–4 replicas with random edits, partitions, heals and restarts converge on the latest-HLC winner per key', async () => {
    const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
    console.log(`sync property (${variant}) seed: ${seed} (replay with FC_SEED=${seed})`)
    const extra = await syncOptions()
    await fc.assert(
      fc.asyncProperty(scenario, async ({ n, ops }) => {
        await closeAll(open)
        open = []
        const network = createLoopbackNetwork()
        const replicas: Replica[] = []
        // clocks start apart so wall time and HLC order disagree with the order of the ops
        for (let i = 0; i < n; i++) replicas.push(await openReplica(`r${i}`, network, { start: Date.UTC(2026, 0, 1) + ((i * 7) % 13), ...extra }))
        open = replicas
        const winners = new Map<string, MirroredRecord>()
        const observe = async (replica: Replica): Promise<void> => {
          for (const [id, record] of await recordsOf(replica)) {
            if (compareHlc(record.hlc, winners.get(id)?.hlc) > 0) winners.set(id, record)
          }
        }
        for (const o of ops) {
          if (o.t === 'deliver') {
            await settle(network, replicas)
            continue
          }
          const replica = replicas[o.r]!
          const { memory } = replica
          switch (o.t) {
            case 'set': await memory.facts.set('p', o.key, o.value); break
            case 'delete': await memory.facts.delete('p', o.key); break
            case 'restore': await memory.facts.restore('p', o.key); break
            case 'block': await memory.blocks.set('p', o.label, o.value); break
            case 'blockDelete': await memory.blocks.delete('p', o.label); break
            case 'summary': await memory.summaries.create('p', { kind: 'project', text: o.text }); break
            case 'advance': replica.clock.advance(o.ms); break
            case 'cut': network.disconnect(replica.name); break
            case 'heal': network.reconnect(replica.name); break
            case 'restart': await replica.restart(); break
          }
          await observe(replica)
        }
        for (const replica of replicas) network.reconnect(replica.name)
        await settle(network, replicas)
        const states = await Promise.all(replicas.map(recordsOf))
        const expected = Object.fromEntries([...winners].map(([id, r]) => [id, r.row]))
        for (const [i, state] of states.entries()) {
          expect(Object.fromEntries([...state].map(([id, r]) => [id, r.row])), `replica r${i}`).toEqual(expected)
          expect(replicas[i]!.errors).toEqual([])
          expect(await replicas[i]!.memory.replication.pending()).toEqual([])
        }
        // the public API agrees too
        const facts = await Promise.all(replicas.map((r) => r.memory.facts.list('p')))
        for (const list of facts) expect(list.items.map((f) => [f.key, f.value])).toEqual(facts[0]!.items.map((f) => [f.key, f.value]))
      }),
      { seed, numRuns: Number(process.env.FC_RUNS ?? defaultRuns) },
    )
  }, 120_000)
})
