import type { BuildContextOptions, Context } from '@engram/core'
import type { QueryState } from './query-state.js'
import { useMemoryQuery } from './use-memory-query.js'

/**
 * The context `context.build` would give a model now, reloaded when the
 * project's memory changes: for a "what the agent sees" panel.
 * @example const { data: context } = useContextPreview(projectId, { sessionId, query: draft, budget: 1000 })
 */
export function useContextPreview(projectId: string, options: BuildContextOptions): QueryState<Context> {
  return useMemoryQuery({
    key: `context.build\u0000${projectId}\u0000${JSON.stringify(options)}`,
    load: (m) => m.context.build(projectId, options),
    source: { changes: { projectId, kinds: ['facts', 'blocks', 'messages', 'summaries', 'passages', 'lessons', 'sessions'] } },
  })
}
