import { reportError, MemoryError } from '@engram/core'
import type { SyncStatus } from './sync-types.js'

/**
 * Per-project sync statuses with listeners and `whenSynced` waiters: the one
 * place that keeps them for the sync engine and for every tab that shows them.
 */
export interface StatusRegistry {
  /** The project's status; 'off' when it has none. */
  get(projectId: string): SyncStatus
  /** Sets a status and tells listeners (and waiters on 'synced'); a repeat is ignored. */
  set(projectId: string, status: SyncStatus): void
  /** Every project with a status other than 'off'. */
  entries(): Array<[string, SyncStatus]>
  /** @returns the unsubscribe function. @throws MemoryError `invalid_input` when the listener is not a function. */
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  /** Resolves at the project's current or next 'synced'. @throws MemoryError `closed` when the registry closes first. */
  whenSynced(projectId: string): Promise<void>
  /** Rejects every waiter with `closed` (saying `reason`) and drops the listeners. */
  close(reason: string): void
}

/** Creates an empty status registry. */
export function createStatusRegistry(): StatusRegistry {
  const statuses = new Map<string, SyncStatus>()
  const listeners = new Set<(projectId: string, status: SyncStatus) => void>()
  const waiters = new Set<{ projectId: string; resolve: () => void; reject: (error: unknown) => void }>()
  let closedReason: string | undefined

  return {
    get: (projectId) => statuses.get(projectId) ?? 'off',
    set(projectId, status) {
      if ((statuses.get(projectId) ?? 'off') === status) return
      if (status === 'off') statuses.delete(projectId)
      else statuses.set(projectId, status)
      if (status === 'synced') {
        for (const waiter of [...waiters]) {
          if (waiter.projectId !== projectId) continue
          waiters.delete(waiter)
          waiter.resolve()
        }
      }
      for (const listener of [...listeners]) {
        try {
          listener(projectId, status)
        } catch (error) {
          // One faulty listener must not starve the others.
          reportError(error)
        }
      }
    },
    entries: () => [...statuses],
    onStatus(listener) {
      if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'onStatus needs a listener function')
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    whenSynced(projectId) {
      return new Promise<void>((resolve, reject) => {
        if (statuses.get(projectId) === 'synced') return resolve()
        if (closedReason !== undefined) return reject(new MemoryError('closed', closedReason))
        waiters.add({ projectId, resolve, reject })
      })
    },
    close(reason) {
      closedReason ??= reason
      for (const waiter of waiters) waiter.reject(new MemoryError('closed', `${reason} before project ${waiter.projectId} synced`))
      waiters.clear()
      listeners.clear()
    },
  }
}
