import type { RelayStore, StoredUpdate } from './persistence.js'
import { observe } from './metrics.js'
import type { RelayMetrics } from './metrics.js'

/**
 * Group commit: updates received in one event-loop turn are stored in one
 * transaction, and only then relayed. One commit per turn instead of one per
 * update keeps durable writes cheap under load without relaying anything that
 * is not on disk yet.
 */
export interface WriteBatch {
  /** Queue an update; `onCommitted` runs once it is durable (never if the commit fails). */
  add(room: string, update: Uint8Array, onCommitted?: () => void): void
  /** Commit what is queued now. False when the commit failed (the failure handler has run). */
  flush(): boolean
}

/**
 * Create the relay's write batch over `store`. `onFailure` receives the rooms
 * whose queued updates were lost: they must be unloaded, since their in-memory
 * documents hold data that is not on disk.
 */
export function createWriteBatch(store: RelayStore, metrics: RelayMetrics, onFailure: (rooms: Set<string>, err: unknown) => void): WriteBatch {
  let entries: StoredUpdate[] = []
  let callbacks: Array<() => void> = []
  let scheduled = false

  const flush = (): boolean => {
    if (entries.length === 0) return true
    const batch = entries
    const done = callbacks
    entries = []
    callbacks = []
    const started = performance.now()
    try {
      store.appendMany(batch)
    } catch (err) {
      metrics.persistErrors++
      onFailure(new Set(batch.map((e) => e.room)), err)
      return false
    }
    observe(metrics.persistLatency, (performance.now() - started) / 1000)
    metrics.persistedUpdates += batch.length
    for (const cb of done) cb()
    return true
  }

  return {
    add(room, update, onCommitted) {
      entries.push({ room, update })
      if (onCommitted !== undefined) callbacks.push(onCommitted)
      if (!scheduled) {
        scheduled = true
        setImmediate(() => {
          scheduled = false
          flush()
        })
      }
    },
    flush,
  }
}
