import type { Hit, SearchOptions } from '@engram/core'
import { useEffect, useState } from 'react'
import { type QueryState, ready } from './query-state.js'
import { useMemoryQuery } from './use-memory-query.js'

/** Options of {@link useSearch}: Engram's search options and the debounce. */
export interface UseSearchOptions extends SearchOptions {
  /** Milliseconds the query must stay unchanged before it runs (default 250). */
  debounceMs?: number
}

/** What {@link useSearch} returns: the query state of the last settled query, and whether a newer one waits. */
export interface SearchState extends QueryState<Hit[]> {
  /** True while the typed query differs from the one the data answers. */
  readonly pending: boolean
}

const NO_HITS: QueryState<Hit[]> = Object.freeze(ready<Hit[]>([]))

/**
 * Searches a project as the user types: the query runs once it has been
 * unchanged for `debounceMs`, a newer query supersedes an older one (its
 * result is dropped), and results reload when the project's memory changes.
 * An empty query returns no hits without searching.
 *
 * @example const { data: hits, pending } = useSearch(projectId, text, { kinds: ['fact', 'passage'] })
 */
export function useSearch(projectId: string, query: string, options: UseSearchOptions = {}): SearchState {
  const { debounceMs = 250, ...search } = options
  const [settled, setSettled] = useState(query)
  useEffect(() => {
    if (query === settled) return
    const timer = setTimeout(() => setSettled(query), debounceMs)
    return () => clearTimeout(timer)
  }, [query, settled, debounceMs])
  const text = settled.trim()
  const state = useMemoryQuery(
    text === ''
      ? null
      : {
          key: `search\u0000${projectId}\u0000${text}\u0000${JSON.stringify(search)}`,
          load: (m) => m.search(projectId, text, search),
          source: { changes: { projectId, kinds: ['facts', 'messages', 'summaries', 'passages'] } },
        },
    NO_HITS,
  )
  return { ...state, pending: query !== settled }
}
