import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Fact, FactVersion, Json } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/*
 * Random sequences of fact operations against a plain in-memory model; after
 * every step get/list/deleted/history agree, and at() agrees with a timeline of
 * model snapshots. Prints its seed; replay with FC_SEED=<seed> (FC_RUNS for more runs).
 */

const KEYS = ['a', 'ab', 'b', 'c'] as const
const TAGS = ['x', 'y'] as const

type Op =
  | { op: 'set'; key: string; value: number; tags: string[]; confidence: number; dt: number }
  | { op: 'delete' | 'restore'; key: string; dt: number }
  | { op: 'deleteAll'; tag?: string; dt: number }
  | { op: 'purge'; key?: string; dt: number }

interface ModelFact {
  value: Json
  tags: string[]
  confidence: number
  createdAt: number
  updatedAt: number
  deletedAt?: number
  version: number
  versions: FactVersion[]
  timeline: Array<[number, Json | undefined]>
}

const key = fc.constantFrom(...KEYS)
const dt = fc.integer({ min: 0, max: 2 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      key,
      value: fc.integer({ min: 0, max: 9 }),
      tags: fc.subarray([...TAGS]),
      confidence: fc.constantFrom(0, 0.5, 1),
      dt,
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key, dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('restore' as const), key, dt }) },
  {
    weight: 1,
    arbitrary: fc.record(
      { op: fc.constant('deleteAll' as const), tag: fc.option(fc.constantFrom(...TAGS), { nil: undefined }), dt },
      { requiredKeys: ['op', 'dt'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('purge' as const), key: fc.option(key, { nil: undefined }), dt }, { requiredKeys: ['op', 'dt'] }) },
)

const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
const numRuns = Number(process.env.FC_RUNS ?? 30)

function toFact(key: string, m: ModelFact): Fact {
  const f: Fact = {
    id: `p/${key}`,
    projectId: 'p',
    key,
    value: m.value,
    confidence: m.confidence,
    tags: m.tags,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    version: m.version,
  }
  if (m.deletedAt !== undefined) f.deletedAt = m.deletedAt
  return f
}

/** Appends a version to the model fact, closing the previous one. */
function bump(m: ModelFact, now: number): void {
  m.version++
  m.updatedAt = now
  const last = m.versions.at(-1)
  if (last) last.validTo = now
  m.versions.push({ key: '', value: m.value, version: m.version, validFrom: now, deleted: m.deletedAt !== undefined, confidence: m.confidence })
  m.timeline.push([now, m.deletedAt === undefined ? m.value : undefined])
}

describe('facts property: store agrees with a plain model', () => {
  it('random set/delete/restore/deleteAll/purge sequences', async () => {
    console.log(`facts property seed: ${seed} (replay with FC_SEED=${seed})`)
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const clock = testClock()
        const memory = await openTestMemory({ now: clock.now })
        await memory.projects.create({ name: 'P', id: 'p' })
        const model = new Map<string, ModelFact>()
        const start = clock.now()
        try {
          for (const o of ops) {
            const now = clock.advance(o.dt)
            await step(o, now)
            await check(now)
          }
        } finally {
          await memory.close()
        }

        async function step(o: Op, now: number): Promise<void> {
          if (o.op === 'set') {
            const m = model.get(o.key) ?? { value: null, tags: [], confidence: 1, createdAt: now, updatedAt: now, version: 0, versions: [], timeline: [] }
            Object.assign(m, { value: o.value, tags: [...o.tags].sort(), confidence: o.confidence })
            delete m.deletedAt
            bump(m, now)
            model.set(o.key, m)
            expect(await memory.facts.set('p', o.key, o.value, { tags: o.tags, confidence: o.confidence })).toEqual(toFact(o.key, m))
          } else if (o.op === 'delete') {
            const m = model.get(o.key)
            const active = m !== undefined && m.deletedAt === undefined
            if (active) {
              m.deletedAt = now
              bump(m, now)
            }
            expect(await memory.facts.delete('p', o.key)).toBe(active)
          } else if (o.op === 'restore') {
            const m = model.get(o.key)
            const wasDeleted = m?.deletedAt !== undefined
            if (m && wasDeleted) {
              delete m.deletedAt
              bump(m, now)
            }
            expect(await memory.facts.restore('p', o.key)).toEqual(m && wasDeleted ? toFact(o.key, m) : undefined)
          } else if (o.op === 'deleteAll') {
            let count = 0
            for (const m of model.values()) {
              if (m.deletedAt === undefined && (o.tag === undefined || m.tags.includes(o.tag))) {
                m.deletedAt = now
                bump(m, now)
                count++
              }
            }
            expect(await memory.facts.deleteAll('p', o.tag === undefined ? {} : { tag: o.tag })).toBe(count)
          } else {
            let count = 0
            for (const [k, m] of [...model]) {
              if (o.key === undefined ? m.deletedAt !== undefined : k === o.key) {
                model.delete(k)
                count++
              }
            }
            expect(await memory.facts.purge('p', o.key)).toBe(count)
          }
        }

        async function check(now: number): Promise<void> {
          const entries = [...model].sort(([a], [b]) => (a < b ? -1 : 1))
          const active = entries.filter(([, m]) => m.deletedAt === undefined)
          expect((await memory.facts.list('p')).items).toEqual(active.map(([k, m]) => toFact(k, m)))
          expect((await memory.facts.list('p', { tag: 'x' })).items).toEqual(active.filter(([, m]) => m.tags.includes('x')).map(([k, m]) => toFact(k, m)))
          const withA = active.filter(([k]) => k.startsWith('a')).map(([k, m]) => toFact(k, m))
          const firstA = await memory.facts.list('p', { prefix: 'a', limit: 1 })
          expect(firstA.items).toEqual(withA.slice(0, 1))
          expect(firstA.next).toBe(withA.length > 1 ? withA[0]!.key : undefined)
          if (firstA.next !== undefined) expect((await memory.facts.list('p', { prefix: 'a', after: firstA.next })).items).toEqual(withA.slice(1))
          const deleted = entries.filter(([, m]) => m.deletedAt !== undefined).sort(([ka, a], [kb, b]) => b.deletedAt! - a.deletedAt! || (ka < kb ? -1 : 1))
          expect((await memory.facts.deleted('p')).items).toEqual(deleted.map(([k, m]) => toFact(k, m)))
          for (const k of KEYS) {
            const m = model.get(k)
            expect(await memory.facts.get('p', k)).toEqual(m && m.deletedAt === undefined ? toFact(k, m) : undefined)
            expect(await memory.facts.history('p', k)).toEqual((m?.versions ?? []).map((v) => ({ ...v, key: k })))
            for (const t of [start - 1, now - 2, now - 1, now]) {
              const believed = (m?.timeline ?? []).filter(([at]) => at <= t).at(-1)?.[1]
              expect(await memory.facts.at('p', k, Math.max(0, t))).toEqual(believed)
            }
          }
        }
      }),
      { seed, numRuns },
    )
  }, 120_000)
})
