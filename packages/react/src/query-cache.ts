import { type ChangeFilter, type Memory, reportError } from '@engram/core'
import { mapError } from '@engram/core/internal'
import { failed, LOADING, type QueryState, ready } from './query-state.js'

/** How a query learns that its data may have changed. */
export type QuerySource = { changes: ChangeFilter } | { watch: (memory: Memory, onChange: () => void) => Promise<() => Promise<void>> }

/** One distinct query: how to load it and when to load it again. */
export interface QuerySpec<T> {
  /** Identifies the query: hooks with equal keys share one load and one subscription. */
  readonly key: string
  load(memory: Memory): Promise<T>
  readonly source: QuerySource
}

/** The queries of one memory, shared by every component under a provider. */
export interface QueryCache {
  /** The current state of a query (LOADING before it was subscribed). */
  snapshot<T>(spec: QuerySpec<T>): QueryState<T>
  /** Starts the query for `listener` (the first one loads and subscribes); returns its unsubscribe. */
  subscribe<T>(spec: QuerySpec<T>, listener: () => void): () => void
  /** How many queries hold a live subscription (for tests and devtools). */
  readonly active: number
}

interface Entry {
  state: QueryState<unknown>
  readonly listeners: Set<() => void>
  generation: number
  closing: boolean
  unsubscribe: Promise<(() => Promise<void>) | undefined>
}

/**
 * Creates the query cache of a memory. A query's first listener loads it and
 * subscribes to the change feed (or another source); later listeners share
 * both. Each change loads it again, and listeners are told only when the
 * result differs (compared as JSON), so a write re-renders only the
 * components whose data changed. When the last listener leaves, the
 * subscription ends on the next microtask — React 19 strict mode unmounts and
 * remounts at once, and that keeps the one subscription.
 */
export function createQueryCache(memory: Memory): QueryCache {
  const entries = new Map<string, Entry>()

  function load(entry: Entry, spec: QuerySpec<unknown>): void {
    const generation = ++entry.generation
    spec.load(memory).then(
      (data) => settle(entry, generation, (prev) => (prev.error === undefined && !prev.loading && sameJson(prev.data, data) ? prev : ready(data))),
      (error: unknown) => settle(entry, generation, (prev) => failed(mapError(error), prev.data)),
    )
  }

  function settle(entry: Entry, generation: number, next: (prev: QueryState<unknown>) => QueryState<unknown>): void {
    // A newer load started, or the query closed: this result is stale.
    if (generation !== entry.generation || entry.closing) return
    const state = next(entry.state)
    if (state === entry.state) return
    entry.state = state
    for (const listener of [...entry.listeners]) listener()
  }

  function open(spec: QuerySpec<unknown>): Entry {
    const entry: Entry = { state: LOADING, listeners: new Set(), generation: 0, closing: false, unsubscribe: Promise.resolve(undefined) }
    entries.set(spec.key, entry)
    const onChange = () => load(entry, spec)
    const { source } = spec
    const subscribed = 'changes' in source ? memory.changes.subscribe(source.changes, onChange) : source.watch(memory, onChange)
    entry.unsubscribe = subscribed.then(
      (off) => off,
      (error: unknown) => {
        settle(entry, entry.generation, (prev) => failed(mapError(error), prev.data))
        return undefined
      },
    )
    load(entry, spec)
    return entry
  }

  function close(key: string, entry: Entry): void {
    queueMicrotask(() => {
      if (entry.listeners.size > 0 || entries.get(key) !== entry) return
      entry.closing = true
      entries.delete(key)
      void entry.unsubscribe.then((off) => off?.()).catch(reportError)
    })
  }

  return {
    snapshot<T>(spec: QuerySpec<T>) {
      return (entries.get(spec.key)?.state ?? LOADING) as QueryState<T>
    },
    subscribe<T>(spec: QuerySpec<T>, listener: () => void) {
      const entry = entries.get(spec.key) ?? open(spec as QuerySpec<unknown>)
      entry.listeners.add(listener)
      return () => {
        entry.listeners.delete(listener)
        if (entry.listeners.size === 0) close(spec.key, entry)
      }
    },
    get active() {
      return entries.size
    },
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}
