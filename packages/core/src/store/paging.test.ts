import { describe, expect, it } from 'vitest'
import type { Memory, Page } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

type Clock = ReturnType<typeof testClock>
type Options = { after?: unknown; limit?: number }

/** One paged list of the public API: how to fill it, and the ids it must list, in its documented order. */
interface PagedList {
  name: string
  /** Writes 7 items (some in the same millisecond) and returns their ids in the list's order. */
  fill(memory: Memory, clock: Clock): Promise<string[]>
  list(memory: Memory, options?: Options): Promise<Page<unknown, unknown>>
  /** The id `fill` returned for an item. */
  id(item: unknown): string
  /** Cursors no page ever returns. */
  badAfter: unknown[]
}

const STRING_BAD = [42, '', 'not a cursor']
const NUMBER_BAD = ['3', -1, 1.5]
// Clock steps between writes: 0 makes ties, which the order must break the same way on every page.
const STEPS = [0, 5, 0, 0, 7, 1, 0]
const PROJECT = 'p'

async function stepped<T>(clock: Clock, write: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < STEPS.length; i++) {
    clock.advance(STEPS[i]!)
    out.push(await write(i))
  }
  return out
}

const lists: PagedList[] = [
  {
    name: 'facts.list (by key)',
    async fill(m, clock) {
      const keys = ['k4', 'k0', 'k6', 'k2', 'k1', 'k5', 'k3']
      await stepped(clock, (i) => m.facts.set(PROJECT, keys[i]!, i))
      return [...keys].sort()
    },
    list: (m, o) => m.facts.list(PROJECT, o as never),
    id: (f) => (f as { key: string }).key,
    badAfter: [42, ''],
  },
  {
    name: 'facts.deleted (newest deletion first, ties by key)',
    async fill(m, clock) {
      const keys = ['d3', 'd1', 'd5', 'd0', 'd6', 'd2', 'd4']
      for (const key of keys) await m.facts.set(PROJECT, key, key)
      const at = await stepped(clock, async (i) => {
        await m.facts.delete(PROJECT, keys[i]!)
        return [clock.now(), keys[i]!] as const
      })
      return at.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1)).map(([, key]) => key)
    },
    list: (m, o) => m.facts.deleted(PROJECT, o as never),
    id: (f) => (f as { key: string }).key,
    badAfter: STRING_BAD,
  },
  {
    name: 'sessions.list (newest activity first, ties by id descending)',
    async fill(m, clock) {
      const ids = ['s2', 's5', 's0', 's6', 's1', 's4', 's3']
      const at = await stepped(clock, async (i) => [(await m.sessions.create(PROJECT, { id: ids[i]! })).lastActiveAt, ids[i]!] as const)
      return at.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : -1)).map(([, id]) => id)
    },
    list: (m, o) => m.sessions.list(PROJECT, o as never),
    id: (s) => (s as { id: string }).id,
    badAfter: STRING_BAD,
  },
  {
    name: 'summaries.list (newest first, same millisecond by creation)',
    async fill(m, clock) {
      const made = await stepped(clock, (i) => m.summaries.create(PROJECT, { kind: 'project', text: `summary ${i}` }))
      return made.map((s) => s.id).reverse()
    },
    list: (m, o) => m.summaries.list(PROJECT, o as never),
    id: (s) => (s as { id: string }).id,
    badAfter: STRING_BAD,
  },
  {
    name: 'archive.list (newest first, same millisecond by creation)',
    async fill(m, clock) {
      const made = await stepped(clock, (i) => m.archive.create(PROJECT, `passage number ${i}`))
      return made.map((p) => p.id).reverse()
    },
    list: (m, o) => m.archive.list(PROJECT, o as never),
    id: (p) => (p as { id: string }).id,
    badAfter: STRING_BAD,
  },
  {
    name: 'journal.sessions (most recently active first, ties by id descending)',
    async fill(m) {
      const last = [30, 10, 30, 20, 30, 5, 20]
      for (let i = 0; i < last.length; i++) await m.journal.append(`j${i}`, { kind: 'k', payload: i, occurredAt: last[i]! })
      return last
        .map((at, i) => [at, `j${i}`] as const)
        .sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : -1))
        .map(([, id]) => id)
    },
    list: (m, o) => m.journal.sessions(o as never),
    id: (s) => (s as { sessionId: string }).sessionId,
    badAfter: STRING_BAD,
  },
  {
    name: 'tasks.list (soonest due first, same due time by creation)',
    async fill(m, clock) {
      const what = ['water the plants', 'pay the rent', 'call the bank', 'book flights', 'renew passport', 'back up the laptop', 'clean gutters']
      const due = [300, 100, 300, 200, 100, 300, 50]
      const made = await stepped(clock, (i) => m.tasks.create(PROJECT, { description: what[i]!, dueAt: clock.now() + due[i]! * 60_000 }))
      return made
        .map((t, i) => [t.dueAt, i, t.id] as const)
        .sort((a, b) => a[0] - b[0] || a[1] - b[1])
        .map(([, , id]) => id)
    },
    list: (m, o) => m.tasks.list(o as never),
    id: (t) => (t as { id: string }).id,
    badAfter: STRING_BAD,
  },
  {
    name: 'messages.page (by seq)',
    async fill(m, clock) {
      await m.sessions.create(PROJECT, { id: 'chat' })
      const made = await stepped(clock, (i) => m.messages.append('chat', { role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }))
      return made.map((x) => String(x.seq))
    },
    list: (m, o) => m.messages.page('chat', o as never),
    id: (x) => String((x as { seq: number }).seq),
    badAfter: NUMBER_BAD,
  },
  {
    name: 'journal.page (by seq)',
    async fill(m, clock) {
      const made = await stepped(clock, (i) => m.journal.append('run-1', { kind: 'step', payload: i }))
      return made.map((r) => String(r.seq))
    },
    list: (m, o) => m.journal.page('run-1', o as never),
    id: (r) => String((r as { seq: number }).seq),
    badAfter: NUMBER_BAD,
  },
  {
    name: 'runs.toolEvents (by seq)',
    async fill(m, clock) {
      const made = await stepped(clock, (i) => m.runs.appendToolEvent('r1', { tool: `tool.${i}`, status: 'ok' }))
      return made.map((e) => String(e.seq))
    },
    list: (m, o) => m.runs.toolEvents('r1', o as never),
    id: (e) => String((e as { seq: number }).seq),
    badAfter: NUMBER_BAD,
  },
  {
    name: 'lessons.outcomes (newest first)',
    async fill(m, clock) {
      const made = await stepped(clock, (i) => m.lessons.appendOutcome(PROJECT, { domain: i % 2 ? 'code' : 'mail', score: i / 10, lesson: `lesson ${i}` }))
      return made.map((o) => String(o.seq)).reverse()
    },
    list: (m, o) => m.lessons.outcomes(PROJECT, o as never),
    id: (o) => String((o as { seq: number }).seq),
    badAfter: NUMBER_BAD,
  },
]

async function filled(list: PagedList) {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: PROJECT })
  const expected = await list.fill(memory, clock)
  expect(new Set(expected).size).toBe(STEPS.length)
  return { memory, expected }
}

describe.each(lists)('$name', (list) => {
  it.each([1, 2, 3, 6, 7, 8, 100])('pages of %i cover every item once, in order; only the last page has no next', async (limit) => {
    const { memory, expected } = await filled(list)
    const pages: Page<unknown, unknown>[] = []
    let after: unknown
    do {
      const page = await list.list(memory, after === undefined ? { limit } : { limit, after })
      pages.push(page)
      after = page.next
    } while (after !== undefined && pages.length <= expected.length)
    expect(pages.flatMap((p) => p.items.map(list.id))).toEqual(expected)
    for (const page of pages.slice(0, -1)) {
      expect(page.items).toHaveLength(limit)
      expect(page.next).toBeDefined()
    }
    const last = pages.at(-1)!
    expect(last.items.length).toBeGreaterThan(0)
    expect(last.items.length).toBeLessThanOrEqual(limit)
    expect(last).not.toHaveProperty('next')
    expect(pages).toHaveLength(Math.ceil(expected.length / limit))
    await memory.close()
  })

  it('lists everything on one page by default; a cursor at the end gives an empty last page', async () => {
    const { memory, expected } = await filled(list)
    const all = await list.list(memory)
    expect(all.items.map(list.id)).toEqual(expected)
    expect(all).not.toHaveProperty('next')
    const first = await list.list(memory, { limit: expected.length - 1 })
    const end = await list.list(memory, { after: first.next, limit: 1 })
    expect(end.items.map(list.id)).toEqual(expected.slice(-1))
    expect(end).not.toHaveProperty('next')
    await memory.close()
  })

  it('refuses a cursor no page returned, offset, and limits outside 1…10,000 with invalid_input', async () => {
    const { memory } = await filled(list)
    for (const after of list.badAfter) {
      await expect(list.list(memory, { after }), `after ${JSON.stringify(after)}`).rejects.toMatchObject({ code: 'invalid_input' })
    }
    for (const limit of [0, -1, 1.5, 10_001, '5' as never]) {
      await expect(list.list(memory, { limit }), `limit ${String(limit)}`).rejects.toMatchObject({ code: 'invalid_input' })
    }
    await expect(list.list(memory, { offset: 1 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect((await list.list(memory, { limit: 10_000 })).items).toHaveLength(STEPS.length)
    await memory.close()
  })
})

describe('the default page size', () => {
  it('is 100: a longer list says where the next page starts', async () => {
    const memory = await openTestMemory()
    await Promise.all(Array.from({ length: 101 }, (_, i) => memory.facts.set('user', `k${String(i).padStart(3, '0')}`, i)))
    for (let i = 0; i < 101; i++) await memory.journal.append('long', { kind: 'k', payload: i })
    const facts = await memory.facts.list('user')
    expect(facts.items).toHaveLength(100)
    expect(facts.next).toBe('k099')
    expect((await memory.facts.list('user', { after: facts.next })).items.map((f) => f.key)).toEqual(['k100'])
    const journal = await memory.journal.page('long')
    expect(journal.items).toHaveLength(100)
    expect(journal.next).toBe(100)
    expect(await memory.journal.page('long', { after: journal.next })).toEqual({ items: [expect.objectContaining({ seq: 101 })] })
    await memory.close()
  })
})
