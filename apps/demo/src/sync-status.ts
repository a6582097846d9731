import type { DemoMemory } from './connect.js'

/** A project's sync state, as `@engram/sync` reports it. */
export type SyncStatus = 'off' | 'connecting' | 'synced' | 'offline' | 'error'

/** Where the demo reads sync status from. */
export interface SyncStatusSource {
  status(projectId: string): Promise<SyncStatus>
  /** Returns its unsubscribe. */
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
}

/** Human text for a badge. */
export const statusText: Record<SyncStatus, string> = {
  off: 'sync off',
  connecting: 'connecting…',
  synced: 'synced',
  offline: 'offline',
  error: 'sync error',
}

/** Reads status from the worker's sync (connectMemory's `sync` option). */
export function syncStatusOf(memory: DemoMemory): SyncStatusSource {
  const sync = (memory as unknown as { sync?: SyncStatusSourceLike }).sync
  if (sync === undefined) {
    return { status: async () => 'off', onStatus: () => () => {} }
  }
  return {
    status: async (projectId) => await sync.status(projectId),
    onStatus: (listener) => {
      let off: (() => void) | undefined
      let cancelled = false
      void Promise.resolve(sync.onStatus(listener)).then((unsubscribe) => {
        if (cancelled) void unsubscribe()
        else off = () => void unsubscribe()
      })
      return () => { cancelled = true; off?.() }
    },
  }
}

interface SyncStatusSourceLike {
  status(projectId: string): SyncStatus | Promise<SyncStatus>
  onStatus(listener: (projectId: string, status: SyncStatus) => void): (() => void) | Promise<() => void | Promise<void>>
}
