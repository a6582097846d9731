import { reportError } from './report-error.js'
import type { ChangeKind } from '../catalog/lists.js'
import type { Unsubscribe } from './status.js'

export type { ChangeKind } from '../catalog/lists.js'

/** Who made a change: this device, or another device through sync. */
export type Origin = 'local' | 'remote'

/** One committed change. */
export interface Change {
  kind: ChangeKind
  op: 'put' | 'delete'
  id: string
  projectId: string
  origin: Origin
}

/** Which changes a subscriber wants; omitted fields match everything. */
export interface ChangeFilter {
  projectId?: string
  kinds?: ChangeKind[]
}

/** Subscribes to committed changes. */
export interface ChangesApi {
  /**
   * Calls `listener` once per committed transaction with the changes it made
   * (filtered). Nothing is emitted for a transaction that rolled back.
   * @returns the unsubscribe function (resolves once the subscription is gone).
   * @throws MemoryError `invalid_input` when the listener is not a function or the filter
   * has an unknown field or kind; `closed` after close().
   */
  subscribe(filter: ChangeFilter, listener: (batch: Change[]) => void): Promise<Unsubscribe>
}

/** The store's in-process change feed. */
export interface ChangeFeed {
  subscribe(filter: ChangeFilter, listener: (batch: Change[]) => void): () => void
  emit(batch: readonly Change[]): void
  /** Number of live subscriptions (tests, leak checks). */
  readonly size: number
}

/** Creates an empty change feed. */
export function createChangeFeed(): ChangeFeed {
  const listeners = new Map<symbol, { filter: ChangeFilter; listener: (batch: Change[]) => void }>()
  return {
    subscribe(filter, listener) {
      const key = Symbol('subscription')
      listeners.set(key, { filter: { ...filter }, listener })
      return () => void listeners.delete(key)
    },
    emit(batch) {
      if (batch.length === 0) return
      for (const { filter, listener } of [...listeners.values()]) {
        const selected = batch.filter((c) => matches(filter, c))
        if (selected.length === 0) continue
        try {
          listener(selected)
        } catch (error) {
          // One faulty listener must not starve the others or fail the write that already committed.
          reportError(error)
        }
      }
    },
    get size() {
      return listeners.size
    },
  }
}

function matches(filter: ChangeFilter, change: Change): boolean {
  if (filter.projectId !== undefined && filter.projectId !== change.projectId) return false
  if (filter.kinds !== undefined && !filter.kinds.includes(change.kind)) return false
  return true
}
