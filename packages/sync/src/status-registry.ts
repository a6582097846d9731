import { reportError, MemoryError } from '@engram/core'
import type { SyncDetails, SyncErrorReason, SyncProblem, SyncStatus } from './sync-types.js'

/** What goes with a status besides its name (see {@link SyncDetails}). */
export interface StatusExtra {
  reason?: SyncErrorReason | undefined
  message?: string | undefined
}

/**
 * Per-project sync statuses with listeners and `whenSynced` waiters: the one
 * place that keeps them for the sync engine and for every tab that shows them.
 * Besides the status name it keeps why a project is in 'error' and the
 * problems (records set aside) that the app should show.
 */
export interface StatusRegistry {
  /** The project's status; 'off' when it has none. */
  get(projectId: string): SyncStatus
  /** The project's status with its reason and problems. */
  details(projectId: string): SyncDetails
  /** Sets a status (with its reason) and tells listeners (and waiters on 'synced'); a repeat is ignored. */
  set(projectId: string, status: SyncStatus, extra?: StatusExtra): void
  /** Replaces the project's list of problems and tells listeners when it changed. */
  setProblems(projectId: string, problems: readonly SyncProblem[]): void
  /** Every project with a status other than 'off'. */
  entries(): Array<[string, SyncStatus]>
  /**
   * Calls `listener` on every change of a status, its reason or its problems.
   * @returns the unsubscribe function. @throws MemoryError `invalid_input` when the listener is not a function.
   */
  onStatus(listener: (projectId: string, status: SyncStatus, details: SyncDetails) => void): () => void
  /** Resolves at the project's current or next 'synced'. @throws MemoryError `closed` when the registry closes first. */
  whenSynced(projectId: string): Promise<void>
  /** Rejects every waiter with `closed` (saying `reason`) and drops the listeners. */
  close(reason: string): void
}

const OFF: SyncDetails = Object.freeze({ status: 'off', problems: Object.freeze([]) as readonly SyncProblem[] })

/** Creates an empty status registry. */
export function createStatusRegistry(): StatusRegistry {
  const all = new Map<string, SyncDetails>()
  const listeners = new Set<(projectId: string, status: SyncStatus, details: SyncDetails) => void>()
  const waiters = new Set<{ projectId: string; resolve: () => void; reject: (error: unknown) => void }>()
  let closedReason: string | undefined

  function publish(projectId: string, next: SyncDetails): void {
    if (next.status === 'off') all.delete(projectId)
    else all.set(projectId, next)
    if (next.status === 'synced') {
      for (const waiter of [...waiters]) {
        if (waiter.projectId !== projectId) continue
        waiters.delete(waiter)
        waiter.resolve()
      }
    }
    for (const listener of [...listeners]) {
      try {
        listener(projectId, next.status, next)
      } catch (error) {
        // One faulty listener must not starve the others.
        reportError(error)
      }
    }
  }

  return {
    get: (projectId) => all.get(projectId)?.status ?? 'off',
    details: (projectId) => all.get(projectId) ?? OFF,
    set(projectId, status, extra = {}) {
      const current = all.get(projectId) ?? OFF
      // Only a state that needs explaining keeps its reason: 'error', and 'read_only' (writes the relay does not take).
      const explained = status === 'error' || status === 'read_only'
      const reason = explained ? extra.reason : undefined
      const message = explained ? extra.message : undefined
      if (current.status === status && current.reason === reason && current.message === message) return
      const problems = status === 'off' ? OFF.problems : current.problems
      publish(projectId, Object.freeze({ status, problems, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }))
    },
    setProblems(projectId, problems) {
      const current = all.get(projectId)
      if (!current) return
      const same = current.problems.length === problems.length && current.problems.every((p, i) => p.key === problems[i]!.key && p.hlc === problems[i]!.hlc)
      if (same) return
      publish(projectId, Object.freeze({ ...current, problems: Object.freeze([...problems]) }))
    },
    entries: () => [...all].map(([projectId, d]) => [projectId, d.status]),
    onStatus(listener) {
      if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'onStatus needs a listener function')
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    whenSynced(projectId) {
      return new Promise<void>((resolve, reject) => {
        if (all.get(projectId)?.status === 'synced') return resolve()
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
