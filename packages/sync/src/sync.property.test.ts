import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import { YKeyValue } from 'y-utility/y-keyvalue'
import { compareHlc, DEFAULT_MAX_CLOCK_LEAD_MS, readHlc, type MirroredRecord } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
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
  | { t: 'cut' | 'heal' | 'restart' | 'reopen'; r: number }
  /** The replica's clock jumps 10 minutes ahead: beyond the drift bound of the others. */
  | { t: 'skew'; r: number }
  /** A foreign client writes a fact with a malformed or absurd stamp into the document. */
  | { t: 'hostile'; key: string; stamp: string }
  | { t: 'deliver' }

const HOSTILE_STAMPS = ['~', '', '9999999999999.99999.x', '1767225600000.100000.dev', 'not.a.stamp']

const op = (replicas: number, hostile: boolean): fc.Arbitrary<Op> => {
  const r = fc.integer({ min: 0, max: replicas - 1 })
  const key = fc.constantFrom(...KEYS)
  const label = fc.constantFrom(...LABELS)
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ t: fc.constant('set' as const), r, key, value: fc.integer({ min: 0, max: 99 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('delete' as const, 'restore' as const), r, key }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('block' as const), r, label, value: fc.string({ maxLength: 8 }) }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('blockDelete' as const), r, label }) },
    {
      weight: 1,
      arbitrary: fc.record({ t: fc.constant('summary' as const), r, text: fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s.trim() !== '') }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), r, ms: fc.integer({ min: 0, max: 50 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('cut' as const, 'heal' as const), r }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), r }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('reopen' as const), r }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('skew' as const), r }) },
    { weight: hostile ? 1 : 0, arbitrary: fc.record({ t: fc.constant('hostile' as const), key, stamp: fc.constantFrom(...HOSTILE_STAMPS) }) },
    { weight: 2, arbitrary: fc.constant({ t: 'deliver' as const }) },
  )
}

const scenario = (hostile: boolean) =>
  fc.integer({ min: 2, max: 4 }).chain((n) => fc.record({ n: fc.constant(n), ops: fc.array(op(n, hostile), { minLength: 1, maxLength: 40 }) }))

let open: Replica[] = []
afterEach(async () => {
  await closeAll(open)
  open = []
})

/** A step on a replica's connection or lifetime, the same in every property: cut, heal, restart or reopen. */
async function connectionStep(step: 'cut' | 'heal' | 'restart' | 'reopen', replica: Replica, network: ReturnType<typeof createLoopbackNetwork>): Promise<void> {
  if (step === 'cut') network.disconnect(replica.name)
  else if (step === 'heal') network.reconnect(replica.name)
  else if (step === 'restart') await replica.restart()
  else await replica.reopen()
}

async function recordsOf(replica: Replica): Promise<Map<string, MirroredRecord>> {
  const { records } = await replicationOf(replica.memory).snapshot('p')
  return new Map(records.map((r) => [`${r.kind}:${r.id}`, r]))
}

// The same property with values in clear and end-to-end encrypted (one key for every replica; fewer runs: sealing is slower).
// Hostile stamps are written in clear by a foreign client: only in the clear variant (encrypted, such values do not open).
const variants: Array<[string, () => Promise<Partial<SyncOptions>>, number, boolean]> = [
  ['in clear', async () => ({}), 20, true],
  [
    'encrypted',
    async () => ({ encryption: { key: await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) } }),
    4,
    false,
  ],
]

/**
 * Keys touched by a replica whose clock is beyond the drift bound, or by a
 * hostile stamp, are "tainted": their records are set aside by the others, so
 * only the bound itself is checked for them (no honest replica stores such a
 * stamp). Every other key converges on the latest-HLC winner everywhere.
 */
describe.each(variants)('sync convergence (property, %s)', (variant, syncOptions, defaultRuns, hostile) => {
  it('2–4 replicas with random edits, partitions, heals, restarts, clock skew and hostile stamps converge on the latest-HLC winner per untainted key', async () => {
    const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
    console.log(`sync property (${variant}) seed: ${seed} (replay with FC_SEED=${seed})`)
    const extra = await syncOptions()
    await fc.assert(
      fc.asyncProperty(scenario(hostile), async ({ n, ops }) => {
        await closeAll(open)
        open = []
        const network = createLoopbackNetwork()
        const replicas: Replica[] = []
        // clocks start apart so wall time and HLC order disagree with the order of the ops
        for (let i = 0; i < n; i++) replicas.push(await openReplica(`r${i}`, network, { start: Date.UTC(2026, 0, 1) + ((i * 7) % 13), ...extra }))
        open = replicas
        const rogue = new Y.Doc()
        const rogueLink = network.connector('rogue')({ doc: rogue, room: 'u1/p', projectId: 'p', setStatus: () => {} })
        const rogueFacts = new YKeyValue<unknown>(rogue.getArray('facts'))
        const fast = new Set<number>()
        const tainted = new Set<string>()
        const winners = new Map<string, MirroredRecord>()
        const observe = async (replica: Replica): Promise<void> => {
          for (const [id, record] of await recordsOf(replica)) {
            if (compareHlc(record.hlc, winners.get(id)?.hlc) > 0) winners.set(id, record)
          }
        }
        /** Every record a fast replica writes from now on is beyond the others' bound. */
        const taintWrites = async (r: number, write: () => Promise<unknown>): Promise<void> => {
          const before = await recordsOf(replicas[r]!)
          await write()
          if (!fast.has(r)) return
          for (const [id, record] of await recordsOf(replicas[r]!)) if (before.get(id)?.hlc !== record.hlc) tainted.add(id)
        }
        for (const o of ops) {
          if (o.t === 'deliver') {
            await settle(network, replicas)
            continue
          }
          if (o.t === 'hostile') {
            rogueFacts.set(`p/${o.key}`, { value: 'hostile', confidence: 1, tags: [], createdAt: 1, updatedAt: 1, hlc: o.stamp })
            tainted.add(`facts:p/${o.key}`)
            continue
          }
          const replica = replicas[o.r]!
          const { memory } = replica
          switch (o.t) {
            case 'set':
              await taintWrites(o.r, () => memory.facts.set('p', o.key, o.value))
              break
            case 'delete':
              await taintWrites(o.r, () => memory.facts.delete('p', o.key))
              break
            case 'restore':
              await taintWrites(o.r, () => memory.facts.restore('p', o.key))
              break
            case 'block':
              await taintWrites(o.r, () => memory.blocks.set('p', o.label, o.value))
              break
            case 'blockDelete':
              await taintWrites(o.r, () => memory.blocks.delete('p', o.label))
              break
            case 'summary':
              await taintWrites(o.r, () => memory.summaries.create('p', { kind: 'project', text: o.text }))
              break
            case 'advance':
              replica.clock.advance(o.ms)
              break
            case 'skew':
              if (!fast.has(o.r)) {
                fast.add(o.r)
                replica.clock.advance(10 * 60_000)
              }
              break
            default:
              await connectionStep(o.t, replica, network)
          }
          await observe(replica)
        }
        for (const replica of replicas) network.reconnect(replica.name)
        await settle(network, replicas)
        rogueLink.destroy()
        const states = await Promise.all(replicas.map(recordsOf))
        const untainted = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries([...entries].filter(([id]) => !tainted.has(id)))
        const expected = untainted([...winners].map(([id, r]) => [id, r.row] as [string, MirroredRecord['row']]))
        for (const [i, state] of states.entries()) {
          const replica = replicas[i]!
          expect(untainted([...state].map(([id, r]) => [id, r.row] as [string, MirroredRecord['row']])), `replica r${i}`).toEqual(expected)
          expect(await replicationOf(replica.memory).pending(), `outbox of r${i}`).toEqual([])
          // set-aside records are the only reported failures, and only where something was set aside
          for (const error of replica.errors) expect(String((error as Error).message), `r${i}`).toMatch(/^Set aside /)
          if (tainted.size === 0) expect(replica.errors, `r${i}`).toEqual([])
          for (const problem of replica.sync.details('p').problems) expect(tainted.has(problem.key), `problem ${problem.key} of r${i}`).toBe(true)
          if (fast.has(i)) continue
          // an honest replica never stores a malformed stamp or one beyond its drift bound
          for (const [id, record] of state) {
            const parts = readHlc(record.hlc)
            expect(parts, `stamp of ${id} on r${i}`).toBeDefined()
            expect(parts!.physical - replica.clock.now(), `lead of ${id} on r${i}`).toBeLessThanOrEqual(DEFAULT_MAX_CLOCK_LEAD_MS)
          }
        }
        // the public API agrees too, on every key untouched by skew or hostile stamps
        const facts = await Promise.all(replicas.map(async (r) => (await r.memory.facts.list('p')).items.filter((f) => !tainted.has(`facts:p/${f.key}`))))
        for (const list of facts) expect(list.map((f) => [f.key, f.value])).toEqual(facts[0]!.map((f) => [f.key, f.value]))
      }),
      { seed, numRuns: Number(process.env.FC_RUNS ?? defaultRuns) },
    )
  }, 120_000)
})

type MessageOp =
  | { t: 'append'; r: number; s: number; role: 'user' | 'assistant' }
  | { t: 'advance'; r: number; ms: number }
  | { t: 'cut' | 'heal' | 'restart' | 'reopen'; r: number }
  | { t: 'deliver' }

const messageOp = (replicas: number): fc.Arbitrary<MessageOp> => {
  const r = fc.integer({ min: 0, max: replicas - 1 })
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        t: fc.constant('append' as const),
        r,
        s: fc.integer({ min: 0, max: 1 }),
        role: fc.constantFrom('user' as const, 'assistant' as const),
      }),
    },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), r, ms: fc.integer({ min: 0, max: 20 }) }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constantFrom('cut' as const, 'heal' as const), r }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('restart' as const, 'reopen' as const), r }) },
    { weight: 1, arbitrary: fc.constant({ t: 'deliver' as const }) },
  )
}

describe.each(variants)('conversation convergence (property, %s)', (variant, syncOptions, defaultRuns) => {
  it('2–4 replicas appending to shared sessions through offline periods and restarts end with every message, in one order, gap-free seqs', async () => {
    const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
    console.log(`conversation property (${variant}) seed: ${seed} (replay with FC_SEED=${seed})`)
    const extra = await syncOptions()
    const scenario = fc.integer({ min: 2, max: 4 }).chain((n) => fc.record({ n: fc.constant(n), ops: fc.array(messageOp(n), { minLength: 1, maxLength: 30 }) }))
    await fc.assert(
      fc.asyncProperty(scenario, async ({ n, ops }) => {
        await closeAll(open)
        open = []
        const network = createLoopbackNetwork()
        const replicas: Replica[] = []
        for (let i = 0; i < n; i++) replicas.push(await openReplica(`r${i}`, network, { start: Date.UTC(2026, 0, 1) + ((i * 7) % 13), ...extra }))
        open = replicas
        for (const r of replicas) await r.memory.projects.setSync('p', { messages: true })
        const sessions = [await replicas[0]!.memory.sessions.create('p'), await replicas[0]!.memory.sessions.create('p')].map((s) => s.id)
        await settle(network, replicas)
        const written = new Set<string>()
        let count = 0
        for (const o of ops) {
          if (o.t === 'deliver') {
            await settle(network, replicas)
            continue
          }
          const replica = replicas[o.r]!
          switch (o.t) {
            case 'append': {
              const m = await replica.memory.messages.append(sessions[o.s]!, { role: o.role, content: `m${count++} by r${o.r}` })
              written.add(m.id)
              break
            }
            case 'advance':
              replica.clock.advance(o.ms)
              break
            default:
              await connectionStep(o.t, replica, network)
          }
        }
        for (const replica of replicas) network.reconnect(replica.name)
        await settle(network, replicas)
        const seen = new Set<string>()
        for (const sessionId of sessions) {
          const orders = await Promise.all(replicas.map(async (r) => (await r.memory.messages.tail(sessionId, 1000)).map((m) => `${m.id}:${m.content}`)))
          for (const [i, order] of orders.entries()) expect(order, `session ${sessionId} on r${i}`).toEqual(orders[0])
          for (const entry of orders[0]!) seen.add(entry.split(':')[0]!)
          for (const [i, r] of replicas.entries()) {
            const seqs = (await r.memory.messages.tail(sessionId, 1000)).map((m) => m.seq).sort((a, b) => a - b)
            expect(seqs, `seqs of ${sessionId} on r${i}`).toEqual(seqs.map((_, k) => k + 1))
            // page walks the same merged order as tail
            const paged: string[] = []
            let after: number | undefined
            do {
              const page = await r.memory.messages.page(sessionId, { limit: 4, ...(after === undefined ? {} : { after }) })
              paged.push(...page.items.map((m) => `${m.id}:${m.content}`))
              after = page.next
            } while (after !== undefined)
            expect(paged, `page of ${sessionId} on r${i}`).toEqual(orders[0])
          }
        }
        expect([...seen].sort()).toEqual([...written].sort())
        for (const [i, replica] of replicas.entries()) {
          expect(await replicationOf(replica.memory).pending(), `outbox of r${i}`).toEqual([])
          expect(replica.errors, `r${i}`).toEqual([])
        }
      }),
      { seed, numRuns: Number(process.env.FC_RUNS ?? defaultRuns) },
    )
  }, 120_000)
})
