// @vitest-environment happy-dom
import type { Memory } from '@engram/core'
import { act, cleanup, render, waitFor } from '@testing-library/react'
import { createElement, StrictMode, type ReactNode } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { useBlocks, useFact, useFacts } from './fact-hooks.js'
import { useMessages, useSessions } from './conversation-hooks.js'
import { MemoryProvider } from './memory-provider.js'
import { useContextPreview } from './use-context-preview.js'
import { useSyncStatus } from './use-sync-status.js'
import { trackSubscriptions } from '../../../test/support/subscription-tracker.js'

afterEach(cleanup)

const renders = new Map<string, number>()
function FactView({ projectId, factKey }: { projectId: string; factKey: string }): ReactNode {
  renders.set(factKey, (renders.get(factKey) ?? 0) + 1)
  const { data, error, loading } = useFact(projectId, factKey)
  const text = loading ? 'loading' : error ? `error:${error.code}` : `${factKey}=${JSON.stringify(data?.value ?? null)}`
  return createElement('p', { 'data-testid': factKey }, text)
}

/** Every hook at once, shown as JSON. */
function Everything({ p, sessionId }: { p: string; sessionId: string }): ReactNode {
  const facts = useFacts(p)
  const blocks = useBlocks(p)
  const sessions = useSessions(p)
  const messages = useMessages(sessionId)
  const context = useContextPreview(p, { sessionId: sessionId, budget: 200 })
  const sync = useSyncStatus(p)
  return createElement(
    'pre',
    { 'data-testid': 'all' },
    JSON.stringify({
      facts: facts.data?.items.map((f) => f.key),
      blocks: blocks.data?.map((b) => b.label),
      sessions: sessions.data?.items.length,
      messages: messages.data?.map((m) => m.content),
      context: context.data?.sections.map((s) => s.name),
      sync: sync.data,
    }),
  )
}

const view = (memory: Memory, ...children: ReactNode[]) => createElement(MemoryProvider, { memory }, ...children)

describe('@engram/react hooks', () => {
  it('re-renders only the components whose data changed', async () => {
    renders.clear()
    const memory = await openTestMemory()
    const p = (await memory.projects.create({ name: 'r' })).id
    await memory.facts.set(p, 'a', 1)
    await memory.facts.set(p, 'b', 1)
    const loads = countLoads(memory)
    const ui = render(view(memory, createElement(FactView, { projectId: p, factKey: 'a' }), createElement(FactView, { projectId: p, factKey: 'b' })))
    await waitFor(() => expect(ui.getByTestId('b').textContent).toBe('b=1'))
    expect(ui.getByTestId('a').textContent).toBe('a=1')
    const before = { a: renders.get('a')!, b: renders.get('b')! }
    const reloaded = loads.whenLoaded(['a', 'b'])
    await act(() => memory.facts.set(p, 'a', 2))
    await act(() => reloaded) // both queries reloaded after the write
    expect(ui.getByTestId('a').textContent).toBe('a=2')
    expect(renders.get('a')).toBe(before.a + 1)
    expect(renders.get('b')).toBe(before.b)
  })

  it('holds one change subscription per distinct query and ends them all on unmount', async () => {
    const memory = await openTestMemory()
    const p = (await memory.projects.create({ name: 'subs' })).id
    const subs = trackSubscriptions(memory)
    const ui = render(
      view(
        memory,
        createElement(FactView, { projectId: p, factKey: 'x' }),
        createElement(FactView, { projectId: p, factKey: 'x' }),
        createElement(FactView, { projectId: p, factKey: 'y' }),
      ),
    )
    await waitFor(() => expect(ui.getAllByText('x=null')).toHaveLength(2))
    await subs.whenLive(2)
    expect(subs.opened).toBe(2)
    ui.unmount()
    await subs.whenLive(0)
    expect(subs.closed).toBe(2)
  })

  it('under React 19 strict mode: loads, keeps one subscription per query, and ends it on unmount', async () => {
    const memory = await openTestMemory()
    const p = (await memory.projects.create({ name: 'strict' })).id
    await memory.facts.set(p, 'k', 'v')
    const subs = trackSubscriptions(memory)
    const ui = render(createElement(StrictMode, null, view(memory, createElement(FactView, { projectId: p, factKey: 'k' }))))
    await waitFor(() => expect(ui.getByTestId('k').textContent).toBe('k="v"'))
    await subs.whenLive(1)
    await act(() => memory.facts.set(p, 'k', 'w'))
    await waitFor(() => expect(ui.getByTestId('k').textContent).toBe('k="w"'))
    ui.unmount()
    await subs.whenLive(0)
    expect(subs.opened - subs.closed).toBe(0)
  })

  it('returns failures as values instead of throwing into render', async () => {
    const memory = await openTestMemory()
    const ui = render(view(memory, createElement(FactView, { projectId: 'user', factKey: ' padded ' })))
    await waitFor(() => expect(ui.container.querySelector('p')?.textContent).toBe('error:invalid_input'))
  })

  it('keeps facts, blocks, sessions, messages, context and sync status current', async () => {
    const memory = await openTestMemory()
    const p = (await memory.projects.create({ name: 'all' })).id
    const session = await memory.sessions.create(p, { title: 'chat' })
    const ui = render(view(memory, createElement(Everything, { p, sessionId: session.id })))
    const shown = () => JSON.parse(ui.getByTestId('all').textContent ?? '{}') as Record<string, unknown>
    await waitFor(() => expect(shown()).toEqual({ facts: [], blocks: [], sessions: 1, messages: [], context: [], sync: 'off' }))
    await act(async () => {
      await memory.facts.set(p, 'lang', 'ts')
      await memory.blocks.set(p, 'persona', 'helpful')
      await memory.messages.appendExchange(session.id, 'hi', 'hello')
    })
    await waitFor(() =>
      expect(shown()).toMatchObject({ facts: ['lang'], blocks: ['persona'], messages: ['hi', 'hello'], context: ['blocks', 'facts', 'recent'] }),
    )
  })
})

/** Counts completed `facts.get` loads per key, to know when every query has reloaded. */
function countLoads(memory: Memory): { whenLoaded(keys: string[]): Promise<void> } {
  const waiting: { keys: Set<string>; resolve: () => void }[] = []
  const get = memory.facts.get.bind(memory.facts)
  memory.facts.get = async (projectId, key) => {
    const fact = await get(projectId, key)
    for (const w of waiting) {
      w.keys.delete(key)
      if (w.keys.size === 0) w.resolve()
    }
    return fact
  }
  return { whenLoaded: (keys) => new Promise((resolve) => waiting.push({ keys: new Set(keys), resolve })) }
}
