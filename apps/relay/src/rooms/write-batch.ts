import type { RelayStore, StoredUpdate } from '../storage/persistence.js'
import { observe } from '../http/metrics.js'
import type { RelayMetrics } from '../http/metrics.js'

/**
 * Group commit: updates received in one event-loop turn are stored in one
 * transaction, and only then relayed. Up to `maxInFlight` commits run at once
 * (a networked store such as PostgreSQL answers each after a round trip; a
 * second batch need not wait for the first); updates that arrive while they
 * are busy form the next one. Cheap durable writes under load, and nothing
 * relayed that is not in the store.
 */
export interface WriteBatch {
  /** Queue an update; `onCommitted` runs once it is durable (never if the commit fails). */
  add(room: string, update: Uint8Array, onCommitted?: () => void): void
  /** Resolves once everything queued so far is committed: true, or false when that commit failed (the failure handler has run). */
  flush(): Promise<boolean>
}

interface Pending {
  entries: StoredUpdate[]
  callbacks: Array<() => void>
  done: Promise<boolean>
  settle: (ok: boolean) => void
}

const pending = (): Pending => {
  let settle: (ok: boolean) => void = () => {}
  const done = new Promise<boolean>((resolve) => {
    settle = resolve
  })
  return { entries: [], callbacks: [], done, settle }
}

/**
 * Create the relay's write batch over `store`. `onFailure` receives the rooms
 * whose queued updates were not stored: they must be unloaded, since their
 * in-memory documents hold data that is not in the store.
 */
export function createWriteBatch(store: RelayStore, metrics: RelayMetrics, onFailure: (rooms: Set<string>, err: unknown) => void, maxInFlight = 4): WriteBatch {
  let next = pending()
  const inFlight = new Set<Promise<boolean>>()
  let scheduled = false

  const commit = async (batch: Pending): Promise<boolean> => {
    const started = performance.now()
    try {
      await store.appendMany(batch.entries)
    } catch (err) {
      metrics.persistErrors++
      onFailure(new Set(batch.entries.map((e) => e.room)), err)
      return false
    }
    observe(metrics.persistLatency, (performance.now() - started) / 1000)
    metrics.persistedUpdates += batch.entries.length
    for (const cb of batch.callbacks) cb()
    return true
  }

  const start = (): void => {
    scheduled = false
    while (inFlight.size < maxInFlight && next.entries.length > 0) {
      const batch = next
      next = pending()
      const committing: Promise<boolean> = commit(batch).then((ok) => {
        inFlight.delete(committing)
        batch.settle(ok)
        start()
        return ok
      })
      inFlight.add(committing)
    }
  }

  return {
    add(room, update, onCommitted) {
      next.entries.push({ room, update })
      if (onCommitted !== undefined) next.callbacks.push(onCommitted)
      if (!scheduled) {
        scheduled = true
        setImmediate(start)
      }
    },
    async flush() {
      const waits = Array.from(inFlight)
      if (next.entries.length > 0) {
        waits.push(next.done)
        start()
      }
      const results = await Promise.all(waits)
      return results.every((ok) => ok)
    },
  }
}
