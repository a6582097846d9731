import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'

/** Keys k00 … k39; those whose number is in `deleted` are deleted. */
async function store(deleted: (i: number) => boolean) {
  const memory = await openTestMemory()
  await memory.projects.create({ name: 'P', id: 'p' })
  await memory.facts.set('p', 'other', 'outside the prefix')
  const key = (i: number) => `k${String(i).padStart(2, '0')}`
  for (let i = 0; i < 40; i++) await memory.facts.set('p', key(i), i)
  for (let i = 0; i < 40; i++) if (deleted(i)) await memory.facts.delete('p', key(i))
  const live = Array.from({ length: 40 }, (_, i) => i)
    .filter((i) => !deleted(i))
    .map(key)
  return { memory, live }
}

describe('facts.list over ranges with deleted facts', () => {
  it('fills a page past a run of deleted facts longer than the page, and pages through every live one', async () => {
    // k00–k24 mostly deleted: a page of 3 must read on past several ranges of deleted rows.
    const { memory, live } = await store((i) => i < 25 && i % 7 !== 0)
    const first = await memory.facts.list('p', { prefix: 'k', limit: 3 })
    expect(first.items.map((f) => f.key)).toEqual(live.slice(0, 3))
    expect(first.next).toBe(live[2])
    const seen: string[] = []
    let after: string | undefined
    for (;;) {
      const page = await memory.facts.list('p', { prefix: 'k', limit: 3, ...(after === undefined ? {} : { after }) })
      seen.push(...page.items.map((f) => f.key))
      if (page.next === undefined) break
      after = page.next
    }
    expect(seen).toEqual(live)
    memory.close()
  })

  it('ends without a cursor when every fact after the page is deleted, and lists the whole project without a prefix', async () => {
    const { memory, live } = await store((i) => i >= 2)
    const page = await memory.facts.list('p', { prefix: 'k', limit: 2 })
    expect(page.items.map((f) => f.key)).toEqual(live)
    expect(page.next).toBeUndefined()
    const all = await memory.facts.list('p', { limit: 100 })
    expect(all.items.map((f) => f.key)).toEqual([...live, 'other'])
    memory.close()
  })
})
