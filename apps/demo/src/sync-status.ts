import type { SyncStatus } from '@engram/worker'
import type { DemoMemory } from './connect.js'

export type { SyncStatus }

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
  read_only: 'read-only — your changes stay on this device',
  offline: 'offline',
  error: 'sync error',
}

/**
 * While the browser says it is offline, a project that syncs is shown as
 * `offline` even if its socket has not noticed yet (a half-open connection
 * can look "synced" for a while).
 */
function effective(status: SyncStatus): SyncStatus {
  return !navigator.onLine && status !== 'off' ? 'offline' : status
}

/** Status from the worker's sync (connectMemory's `sync` option), with a synchronous unsubscribe. */
export function syncStatusOf(memory: DemoMemory): SyncStatusSource {
  const known = new Map<string, SyncStatus>()
  const listeners = new Set<(projectId: string, status: SyncStatus) => void>()
  const emit = (projectId: string, status: SyncStatus): void => {
    known.set(projectId, status)
    for (const listener of listeners) listener(projectId, effective(status))
  }
  const replay = (): void => {
    for (const [projectId, status] of known) emit(projectId, status)
  }
  window.addEventListener('online', replay)
  window.addEventListener('offline', replay)
  memory.sync.onStatus(emit).catch(() => {})
  return {
    status: async (projectId) => {
      const status = await memory.sync.status(projectId)
      known.set(projectId, status)
      return effective(status)
    },
    onStatus: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
