import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'
import type { Change } from '../../store/change-feed.js'
import { type IndexChanges, IndexState } from '../index/index-state.js'
import { QueryCache } from './query-cache.js'

const change = (kind: Change['kind'], id: string, op: Change['op'] = 'put'): Change => ({ kind, op, id, projectId: 'p1', origin: 'local' })

describe('query cache', () => {
  it('keeps records within its character bound, least recently used out first', () => {
    const cache = new QueryCache(10)
    const g = cache.begin(0)
    cache.keepRecord('passage:a', { projectId: 'p1', text: 'aaaa' }, g)
    cache.keepRecord('passage:b', { projectId: 'p1', text: 'bbbb' }, g)
    expect(cache.record('passage:a')?.text).toBe('aaaa') // a is now the most recent
    cache.keepRecord('passage:c', { projectId: 'p1', text: 'cccc' }, g)
    expect(cache.record('passage:b')).toBeUndefined()
    expect(cache.record('passage:a')?.text).toBe('aaaa')
    expect(cache.record('passage:c')?.text).toBe('cccc')
    expect(cache.size).toBe(2)
  })

  it('drops what a change makes stale, and fills from reads that started before it', () => {
    const cache = new QueryCache()
    const g = cache.begin(0)
    const row = { id: 'm1', sessionId: 's1', projectId: 'p1', seq: 1, role: 'user' as const, content: 'hello', tokens: 1, createdAt: 1 }
    cache.keepMessage(row, g)
    cache.keepWindow('m1', ['m1'], g)
    cache.keepProject('p1', true, g)
    cache.keepRecord('fact:f1', { projectId: 'p1', text: 'k: v' }, g)
    cache.invalidate([change('messages', 'm2')])
    // Another message of the session changed: the windows go, m1's row stays.
    expect(cache.window('m1')).toBeUndefined()
    expect(cache.message('m1')?.content).toBe('hello')
    cache.invalidate([change('messages', 'm1', 'delete'), change('facts', 'f1'), change('projects', 'p1')])
    expect(cache.message('m1')).toBeUndefined()
    expect(cache.record('fact:f1')).toBeUndefined()
    expect(cache.project('p1')).toBeUndefined()
    // A read that began before the last change may hold old rows: not kept.
    cache.keepRecord('fact:f1', { projectId: 'p1', text: 'k: old' }, g)
    cache.keepProject('p1', false, g)
    expect(cache.record('fact:f1')).toBeUndefined()
    expect(cache.project('p1')).toBeUndefined()
  })

  it('forgets everything when the index is rewritten', () => {
    const cache = new QueryCache()
    const g = cache.begin(3)
    cache.keepRecord('passage:a', { projectId: 'p1', text: 'a' }, g)
    expect(cache.begin(3)).toBe(g)
    expect(cache.begin(4)).not.toBe(g)
    expect(cache.record('passage:a')).toBeUndefined()
  })

  it('is rewritten by a reset or a removed project, not by a merge (which changes no record)', () => {
    const state = new IndexState()
    state.ready = true
    const changes = (extra: Partial<IndexChanges>): IndexChanges => ({
      added: [],
      killed: [],
      assigned: [],
      removedProjects: [],
      vectorProjects: new Set(),
      reset: false,
      ...extra,
    })
    const cache = new QueryCache()
    const g = cache.begin(state.rewriteEpoch)
    cache.keepRecord('passage:a', { projectId: 'p1', text: 'a' }, g)
    const blocks = state.blockEpoch
    state.apply(changes({ merged: { mark: 10, merged: [], purged: [], recorded: [], corpus: [] } }))
    expect(state.blockEpoch).toBeGreaterThan(blocks)
    expect(cache.begin(state.rewriteEpoch)).toBe(g)
    expect(cache.record('passage:a')?.text).toBe('a')
    state.apply(changes({ removedProjects: [1] }))
    cache.begin(state.rewriteEpoch)
    expect(cache.record('passage:a')).toBeUndefined()
    const g2 = cache.begin(state.rewriteEpoch)
    cache.keepRecord('passage:b', { projectId: 'p1', text: 'b' }, g2)
    state.apply(changes({ reset: true }))
    cache.begin(state.rewriteEpoch)
    expect(cache.record('passage:b')).toBeUndefined()
  })
})

describe('search and context.build with the query cache', () => {
  it('never serve a record, a turn or a project state a later write changed', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    const s = await memory.sessions.create('p1')
    const [question, answer] = await memory.messages.appendExchange(s.id, 'Where did the otter sleep?', 'In the reeds by the river.')
    const first = await memory.search('p1', 'otter sleep')
    expect(first.map((h) => h.text)).toEqual(['Where did the otter sleep?', 'In the reeds by the river.'])

    await memory.messages.edit(question!.id, { content: 'Where did the otter nap and sleep?' })
    expect((await memory.search('p1', 'otter sleep'))[0]?.text).toBe('Where did the otter nap and sleep?')

    // The adjacent turn changes: the cached window around the hit must not return the old reply.
    await memory.messages.edit(answer!.id, { content: 'On the warm sand bank.' })
    expect((await memory.search('p1', 'otter sleep')).map((h) => h.text)).toEqual(['Where did the otter nap and sleep?', 'On the warm sand bank.'])
    const built = await memory.context.build('p1', { query: 'otter sleep', budget: 500 })
    expect(built.text).toContain('On the warm sand bank.')
    expect(built.text).not.toContain('reeds')

    await memory.messages.delete(answer!.id)
    expect((await memory.search('p1', 'otter sleep')).map((h) => h.text)).toEqual(['Where did the otter nap and sleep?'])
    expect((await memory.context.build('p1', { query: 'otter sleep', budget: 500 })).text).not.toContain('sand bank')

    // A new turn next to the hit joins its window.
    await memory.messages.append(s.id, { role: 'assistant', content: 'Under the old willow.' })
    expect((await memory.search('p1', 'otter sleep')).map((h) => h.text)).toContain('Under the old willow.')

    await memory.projects.archive('p1')
    expect(await memory.search('p1', 'otter sleep')).toEqual([])
    await memory.close()
  })

  it('serve current records after merges, which keep the cache', async () => {
    let merged: () => void = () => {}
    const memory = await openTestMemory({ mergeDelayMs: 1, onMerge: () => merged() } as Record<string, unknown>)
    const nextMerge = () => new Promise<void>((resolve) => (merged = resolve))
    await memory.projects.create({ name: 'P', id: 'p1' })
    const s = await memory.sessions.create('p1')
    let merge = nextMerge()
    const [question] = await memory.messages.appendExchange(s.id, 'Where did the otter sleep?', 'In the reeds by the river.')
    await merge
    expect((await memory.search('p1', 'otter sleep'))[0]?.text).toBe('Where did the otter sleep?')
    merge = nextMerge()
    await memory.messages.edit(question!.id, { content: 'Where did the otter nap and sleep?' })
    await merge
    expect((await memory.search('p1', 'otter sleep'))[0]?.text).toBe('Where did the otter nap and sleep?')
    merge = nextMerge()
    await memory.messages.append(s.id, { role: 'user', content: 'Does the otter sleep all day?' })
    await merge
    expect((await memory.search('p1', 'otter sleep')).map((h) => h.text)).toContain('Does the otter sleep all day?')
    await memory.close()
  })

  it('drops a fact from results once it is deleted, and shows its new value once it changes', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.facts.set('p1', 'pet', 'a grey parrot called Kiwi')
    expect((await memory.search('p1', 'parrot'))[0]?.text).toBe('pet: a grey parrot called Kiwi')
    await memory.facts.set('p1', 'pet', 'a green parrot called Mango')
    expect((await memory.search('p1', 'parrot')).map((h) => h.text)).toEqual(['pet: a green parrot called Mango'])
    await memory.facts.delete('p1', 'pet')
    expect(await memory.search('p1', 'parrot')).toEqual([])
    await memory.close()
  })
})
