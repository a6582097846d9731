import { IDBObjectStore } from 'fake-indexeddb'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'
import { VIEW_PROJECTS } from './facts-view.js'

/*
 * `context.build` reads a project's facts once and keeps them until one changes (facts-view.ts).
 * Range reads of the facts store (keyed by `[projectId+key]`) are counted on fake-indexeddb.
 */

let listReads = 0
const proto = IDBObjectStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>
const originals = new Map(['getAll', 'openCursor'].map((m) => [m, proto[m]!]))
beforeAll(() => {
  for (const [method, original] of originals)
    proto[method] = function (this: IDBObjectStore, ...args: unknown[]) {
      if (this.name === 'facts') listReads++
      return original.apply(this, args)
    }
})
afterAll(() => {
  for (const [method, original] of originals) proto[method] = original
})
beforeEach(() => {
  listReads = 0
})

describe('the facts view of context.build', () => {
  it('reads a project’s facts once, and again only after one changed', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ id: 'p1', name: 'P' })
    await memory.facts.set('p1', 'editor', 'vim')
    await memory.facts.set('p1', 'shell', 'fish')
    await memory.facts.set('user', 'name', 'Ada')
    expect((await memory.context.build('p1', { budget: 500 })).text).toContain('vim')
    const first = listReads
    expect(first).toBeGreaterThan(0)
    expect((await memory.context.build('p1', { budget: 500, query: 'editor' })).text).toContain('fish')
    expect(listReads).toBe(first)

    await memory.facts.set('p1', 'editor', 'helix')
    await memory.facts.delete('p1', 'shell')
    await memory.facts.set('user', 'name', 'Ada L.')
    const text = (await memory.context.build('p1', { budget: 500 })).text
    expect(text).toContain('helix')
    expect(text).toContain('Ada L.')
    expect(text).not.toContain('vim')
    expect(text).not.toContain('fish')
    memory.close()
  })

  it('leaves an expired fact out though it holds it', async () => {
    let now = Date.UTC(2026, 0, 1)
    const memory = await openTestMemory({ now: () => now })
    await memory.projects.create({ id: 'p1', name: 'P' })
    await memory.facts.set('p1', 'visit', 'today', { expiresAt: now + 1000 })
    expect((await memory.context.build('p1', { budget: 500 })).text).toContain('today')
    now += 2000
    expect((await memory.context.build('p1', { budget: 500 })).text).not.toContain('today')
    memory.close()
  })

  it(`holds ${VIEW_PROJECTS} projects at most, the least recently built first out`, async () => {
    const memory = await openTestMemory()
    const ids = Array.from({ length: VIEW_PROJECTS + 1 }, (_, i) => `p${i}`)
    for (const id of ids) {
      await memory.projects.create({ id, name: id })
      await memory.facts.set(id, 'k', id)
    }
    for (const id of ids) await memory.context.build(id, { budget: 200, sections: ['facts'] })
    listReads = 0
    // p0 went out when the last one came in; the others are held.
    for (const id of ids.slice(2)) await memory.context.build(id, { budget: 200, sections: ['facts'] })
    expect(listReads).toBe(0)
    await memory.context.build('p0', { budget: 200, sections: ['facts'] })
    expect(listReads).toBeGreaterThan(0)
    memory.close()
  })
})
