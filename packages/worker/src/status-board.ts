// The subpath keeps Yjs out of the host bundle until sync is actually started.
import { createStatusRegistry } from '@engram/sync/status'
import type { SyncHandle, SyncStatus } from './api.js'

/** What travels on the status channel between the hosts of one database. */
type StatusMessage = { t: 'hello' } | { t: 'set'; projectId: string; status: SyncStatus } | { t: 'all'; statuses: Array<[string, SyncStatus]> }

/**
 * The per-project sync status of one database as every tab sees it. The tab
 * that leads sync feeds it from its sync engine and broadcasts each change;
 * the other tabs (dedicated worker per tab) mirror the leader's statuses, so
 * `status`, `onStatus` and `whenSynced` tell the real state everywhere.
 */
export interface StatusBoard {
  status(projectId: string): SyncStatus
  /** @returns the unsubscribe function. */
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  /** Resolves at the project's next (or current) 'synced'. @throws MemoryError `closed` when the board closes first. */
  whenSynced(projectId: string): Promise<void>
  /** This host leads: statuses come from `handle` and go out to the other tabs. @returns the function that ends it. */
  lead(handle: SyncHandle): () => void
  close(): void
}

/**
 * Creates the status board of one database; `channelName` names the
 * `BroadcastChannel` shared with other tabs' hosts (none where it does not exist).
 */
export function createStatusBoard(channelName: string): StatusBoard {
  const statuses = createStatusRegistry()
  const set = statuses.set
  const channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(channelName)
  let leading = false
  let closed = false

  const post = (message: StatusMessage): void => {
    if (!closed) channel?.postMessage(message)
  }

  function replaceAll(next: ReadonlyArray<readonly [string, SyncStatus]>): void {
    const incoming = new Map(next)
    for (const [projectId] of statuses.entries()) if (!incoming.has(projectId)) set(projectId, 'off')
    for (const [projectId, status] of incoming) set(projectId, status)
  }

  if (channel) {
    channel.onmessage = (event: MessageEvent<StatusMessage>) => {
      const message = event.data
      if (closed) return
      if (message.t === 'hello') {
        if (leading) post({ t: 'all', statuses: statuses.entries() })
        return
      }
      if (leading) return // this host's own engine is the truth
      if (message.t === 'set') set(message.projectId, message.status)
      else if (message.t === 'all') replaceAll(message.statuses)
    }
    post({ t: 'hello' }) // a leader already running answers with its statuses
  }

  return {
    status: (projectId) => statuses.get(projectId),
    onStatus: (listener) => statuses.onStatus(listener),
    whenSynced: (projectId) => statuses.whenSynced(projectId),
    lead(handle) {
      leading = true
      replaceAll([])
      post({ t: 'all', statuses: [] })
      const off = handle.onStatus((projectId, status) => {
        set(projectId, status)
        post({ t: 'set', projectId, status })
      })
      return () => {
        off()
        leading = false
        replaceAll([])
        post({ t: 'all', statuses: [] })
      }
    },
    close() {
      if (closed) return
      closed = true
      statuses.close('The store closed')
      channel?.close()
    },
  }
}
