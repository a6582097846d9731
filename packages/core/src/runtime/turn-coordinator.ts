/**
 * In-memory coordination of turn calls: concurrent calls for the same key share one
 * promise, and a settled result is reused for a while. The store stays the source of
 * truth (a lost entry only costs a database read), so the state is bounded freely.
 */

/** Bounds of the coordinator's state. */
export interface CoordinatorLimits {
  /** How long a settled result is reused (ms). */
  ttlMs: number
  /** Most keys held at once; the oldest go first. */
  maxEntries: number
}

/** Default bounds: results kept 5 minutes, at most 256 keys (a result holds a built context). */
export const DEFAULT_COORDINATOR_LIMITS: CoordinatorLimits = { ttlMs: 5 * 60_000, maxEntries: 256 }

/** Shares in-flight and recent results per key. */
export interface TurnCoordinator {
  /**
   * Runs `fn` for `key` unless a call for it is in flight or settled within the TTL. Failures
   * are not kept; with `reuse: false` results are not kept either (only in-flight calls are shared).
   */
  run<T>(key: string, fn: () => Promise<T>, options?: { reuse?: boolean }): Promise<T>
  /** Forgets a key (after a write that makes its result stale). */
  forget(key: string): void
  /** Number of keys held. */
  readonly size: number
  /** Drops everything (on close). */
  clear(): void
}

interface Entry {
  promise: Promise<unknown>
  settledAt?: number
}

/** Creates a coordinator with the given bounds and clock. */
export function createTurnCoordinator(limits: CoordinatorLimits, now: () => number): TurnCoordinator {
  const entries = new Map<string, Entry>()

  function prune(): void {
    const t = now()
    for (const [key, entry] of entries) {
      if (entry.settledAt !== undefined && t - entry.settledAt > limits.ttlMs) entries.delete(key)
    }
    // Map iteration is insertion order, so the first keys are the oldest.
    for (const key of entries.keys()) {
      if (entries.size <= limits.maxEntries) break
      entries.delete(key)
    }
  }

  return {
    run<T>(key: string, fn: () => Promise<T>, options: { reuse?: boolean } = {}): Promise<T> {
      const existing = entries.get(key)
      if (existing && (existing.settledAt === undefined || now() - existing.settledAt <= limits.ttlMs)) return existing.promise as Promise<T>
      const entry: Entry = { promise: Promise.resolve() }
      entry.promise = fn().then(
        (value) => {
          entry.settledAt = now()
          if (options.reuse === false && entries.get(key) === entry) entries.delete(key)
          return value
        },
        (error: unknown) => {
          if (entries.get(key) === entry) entries.delete(key)
          throw error
        },
      )
      entries.delete(key)
      entries.set(key, entry)
      prune()
      return entry.promise as Promise<T>
    },
    forget(key) {
      entries.delete(key)
    },
    get size() {
      return entries.size
    },
    clear() {
      entries.clear()
    },
  }
}
