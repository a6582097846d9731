import type { SyncState } from '@engram/core'
import type { QueryState } from './query-state.js'
import { useMemoryQuery } from './use-memory-query.js'

/**
 * The sync state of a project (`memory.sync.status`): `off`, `connecting`,
 * `synced`, `offline` or `error`, kept current through `memory.sync.onStatus`.
 */
export function useSyncStatus(projectId: string): QueryState<SyncState> {
  return useMemoryQuery({
    key: `sync.status\u0000${projectId}`,
    load: (m) => m.sync.status(projectId),
    source: {
      watch: (m, onChange) =>
        m.sync.onStatus((changed) => {
          if (changed === projectId) onChange()
        }),
    },
  })
}
