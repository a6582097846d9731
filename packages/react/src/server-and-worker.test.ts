// @vitest-environment happy-dom
import { MessageChannel } from 'node:worker_threads'
import type { Hit, Memory } from '@engram/core'
import { connectMemory, exposeMemory } from '@engram/worker'
import { act, cleanup, render, waitFor } from '@testing-library/react'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createElement, type ReactNode } from 'react'
import { renderToString } from 'react-dom/server'
import { afterEach, describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { trackSubscriptions } from '../../../test/support/subscription-tracker.js'
import { useFact, useFacts } from './fact-hooks.js'
import { MemoryProvider } from './memory-provider.js'
import { useSearch } from './use-search.js'

afterEach(cleanup)

function Fact({ projectId }: { projectId: string }): ReactNode {
  const { data } = useFact(projectId, 'k')
  return createElement('span', null, String(data?.value ?? 'none'))
}

function Search({ p, q }: { p: string; q: string }): ReactNode {
  const { data, pending } = useSearch(p, q, { debounceMs: 20 })
  return createElement('p', null, `${pending ? 'pending ' : ''}${(data ?? []).map((h: Hit) => h.text).join('|') || 'none'}`)
}

function Facts({ projectId }: { projectId: string }): ReactNode {
  const { data, loading, error } = useFacts(projectId)
  return createElement('p', null, loading ? 'loading' : error ? error.code : data?.items.map((f) => f.key).join(',') || 'none')
}

describe('@engram/react on the server', () => {
  it('renders loading and touches no memory method (no IndexedDB)', () => {
    const touched: string[] = []
    const trap = new Proxy(
      {},
      {
        get: (_t, prop) => {
          touched.push(String(prop))
          throw new Error(`memory.${String(prop)} used on the server`)
        },
      },
    ) as Memory
    expect(renderToString(createElement(MemoryProvider, { memory: trap }, createElement(Facts, { projectId: 'p' })))).toBe('<p>loading</p>')
    expect(renderToString(createElement(MemoryProvider, { memory: undefined }, createElement(Facts, { projectId: 'p' })))).toBe('<p>loading</p>')
    expect(touched).toEqual([])
  })
})

describe('@engram/react through a worker client', () => {
  it('reads and follows changes through connectMemory, and leaves no subscription behind on unmount', async () => {
    const channel = new MessageChannel()
    const host = exposeMemory({ endpoint: channel.port1 as never, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
    const memory = await connectMemory(channel.port2 as never, { appId: 'react', userId: 'worker' })
    const p = (await memory.projects.create({ name: 'w' })).id
    const subs = trackSubscriptions(memory)
    const ui = render(createElement(MemoryProvider, { memory }, createElement(Facts, { projectId: p }), createElement(Fact, { projectId: p })))
    await waitFor(() => expect(ui.container.textContent).toBe('nonenone'))
    await act(() => memory.facts.set(p, 'k', 'v'))
    await waitFor(() => expect(ui.container.textContent).toBe('kv'))
    await subs.whenLive(2)
    ui.unmount()
    // Each unsubscribe resolves once the host has dropped the subscription.
    await subs.whenLive(0)
    expect(subs.closed).toBe(2)
    await memory.close()
    host.close()
  })
})

describe('useSearch', () => {
  it('debounces typing into one search, and drops a stale result that arrives late', async () => {
    const memory = await openTestMemory()
    const p = (await memory.projects.create({ name: 's' })).id
    await memory.facts.set(p, 'colour', 'teal')
    await memory.facts.set(p, 'city', 'Lisbon')
    const calls: string[] = []
    let releaseSlow!: () => void
    let slowDone!: () => void
    const slowFinished = new Promise<void>((resolve) => {
      slowDone = resolve
    })
    const search = memory.search
    const spied: Memory['search'] = async (projectId, query, options) => {
      calls.push(query)
      if (query !== 'slow') return search(projectId, query, options)
      await new Promise<void>((resolve) => {
        releaseSlow = resolve
      })
      const hits = await search(projectId, 'teal', options)
      queueMicrotask(slowDone) // after the cache has seen this result
      return hits
    }
    Object.assign(memory, { search: spied })
    const ui = render(createElement(MemoryProvider, { memory }, createElement(Search, { p, q: '' })))
    expect(ui.container.textContent).toBe('none')
    for (const q of ['t', 'te', 'tea', 'teal']) ui.rerender(createElement(MemoryProvider, { memory }, createElement(Search, { p, q })))
    expect(ui.container.textContent).toBe('pending none')
    await waitFor(() => expect(ui.container.textContent).toBe('colour: teal'))
    expect(calls).toEqual(['teal'])

    ui.rerender(createElement(MemoryProvider, { memory }, createElement(Search, { p, q: 'slow' })))
    await waitFor(() => expect(calls).toEqual(['teal', 'slow']))
    ui.rerender(createElement(MemoryProvider, { memory }, createElement(Search, { p, q: 'lisbon' })))
    await waitFor(() => expect(ui.container.textContent).toBe('city: Lisbon'))
    await act(async () => {
      releaseSlow()
      await slowFinished
    })
    expect(ui.container.textContent).toBe('city: Lisbon')
  })
})
