import type { Block, Fact, ListFactsOptions, Page } from '@engram/core'
import type { QueryState } from './query-state.js'
import { useMemoryQuery } from './use-memory-query.js'

/**
 * The active facts of a project, one page (`facts.list`), kept current.
 * @example const { data, error } = useFacts(projectId, { tag: 'pref', limit: 50 })
 */
export function useFacts(projectId: string, options: ListFactsOptions = {}): QueryState<Page<Fact>> {
  return useMemoryQuery({
    key: `facts.list\u0000${projectId}\u0000${JSON.stringify(options)}`,
    load: (m) => m.facts.list(projectId, options),
    source: { changes: { projectId, kinds: ['facts'] } },
  })
}

/** One fact (`facts.get`; undefined data once loaded when missing or deleted), kept current. */
export function useFact(projectId: string, key: string): QueryState<Fact | undefined> {
  return useMemoryQuery({
    key: `facts.get\u0000${projectId}\u0000${key}`,
    load: (m) => m.facts.get(projectId, key),
    source: { changes: { projectId, kinds: ['facts'] } },
  })
}

/** The core memory blocks of a project (`blocks.list`), kept current. */
export function useBlocks(projectId: string): QueryState<Block[]> {
  return useMemoryQuery({
    key: `blocks.list\u0000${projectId}`,
    load: (m) => m.blocks.list(projectId),
    source: { changes: { projectId, kinds: ['blocks'] } },
  })
}
