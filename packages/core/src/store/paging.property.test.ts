// As in a browser: with a global IndexedDB, Dexie's maxKey is an array key, above every string key
// (with only an injected factory it falls back to '\uffff'; see the U+FFFF key tests).
import 'fake-indexeddb/auto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Fact, Page, Session } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/*
 * Random writes (keys and ids with cursor-like characters, many in the same
 * millisecond), then every page size: paging through facts.list (with and
 * without a prefix), facts.deleted and sessions.list returns exactly what a
 * plain model lists, in its order. Prints its seed; replay with FC_SEED=<seed>
 * (FC_RUNS for more runs).
 */

const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
const numRuns = Number(process.env.FC_RUNS ?? 20)

// Characters a cursor could trip on: its separator, a path slash, the highest code unit, a non-ASCII letter.
const name = fc.string({ unit: fc.constantFrom('a', 'b', '~', '/', '0', 'é', '\uffff'), minLength: 1, maxLength: 3 })
const dt = fc.constantFrom(0, 0, 1, 3)

type Op = { op: 'set' | 'delete'; key: string; dt: number } | { op: 'session'; id: string; dt: number } | { op: 'message'; id: string; dt: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('set' as const), key: name, dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: name, dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('session' as const), id: name, dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('message' as const), id: name, dt }) },
)

/** Every item of a paged list, following `next` until it is absent. */
async function pageThrough<T, C>(limit: number, list: (options: { limit: number; after?: C }) => Promise<Page<T, C>>): Promise<T[]> {
  const items: T[] = []
  let page = await list({ limit })
  for (let n = 0; ; n++) {
    if (n > 1000) throw new Error('paging does not end')
    items.push(...page.items)
    if (page.next === undefined) return items
    expect(page.items).toHaveLength(limit)
    page = await list({ limit, after: page.next })
  }
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

describe('paging (property)', () => {
  it('covers every item exactly once, in the documented order, for any page size', async () => {
    console.log(`paging property seed: ${seed} (replay with FC_SEED=${seed})`)
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom('', 'a', '~', '\uffff'),
        async (ops, limit, prefix) => {
          const clock = testClock()
          const memory = await openTestMemory({ now: clock.now })
          await memory.projects.create({ name: 'P', id: 'p' })
          const facts = new Map<string, { deletedAt?: number }>()
          const sessions = new Map<string, number>()
          for (const o of ops) {
            clock.advance(o.dt)
            if (o.op === 'set') {
              await memory.facts.set('p', o.key, 1)
              facts.set(o.key, {})
            } else if (o.op === 'delete') {
              if (await memory.facts.delete('p', o.key)) facts.set(o.key, { deletedAt: clock.now() })
            } else if (o.op === 'session') {
              if (!sessions.has(o.id)) {
                await memory.sessions.create('p', { id: o.id })
                sessions.set(o.id, clock.now())
              }
            } else if (o.op === 'message' && sessions.has(o.id)) {
              await memory.messages.append(o.id, { role: 'user', content: 'hi' })
              sessions.set(o.id, clock.now())
            }
          }
          const active = [...facts]
            .filter(([, f]) => f.deletedAt === undefined)
            .map(([k]) => k)
            .sort(byCodeUnits)
          expect((await pageThrough<Fact, string>(limit, (o) => memory.facts.list('p', o))).map((f) => f.key)).toEqual(active)
          expect((await pageThrough<Fact, string>(limit, (o) => memory.facts.list('p', { ...o, prefix }))).map((f) => f.key)).toEqual(
            active.filter((k) => k.startsWith(prefix)),
          )
          const deleted = [...facts]
            .filter(([, f]) => f.deletedAt !== undefined)
            .sort(([ka, a], [kb, b]) => b.deletedAt! - a.deletedAt! || byCodeUnits(ka, kb))
            .map(([k]) => k)
          expect((await pageThrough<Fact, string>(limit, (o) => memory.facts.deleted('p', o))).map((f) => f.key)).toEqual(deleted)
          const recent = [...sessions].sort(([ia, a], [ib, b]) => b - a || byCodeUnits(ib, ia)).map(([id]) => id)
          expect((await pageThrough<Session, string>(limit, (o) => memory.sessions.list('p', o))).map((s) => s.id)).toEqual(recent)
          await memory.close()
        },
      ),
      { seed, numRuns },
    )
  })
})
