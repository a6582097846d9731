/**
 * When a room may compact. A compaction re-encodes the whole document, so
 * without a budget a document near its cap pays a full compaction for every
 * tiny update (each one frees a few bytes, the next update takes them back).
 * Two rules bound it:
 *
 * - **bytes**: a compaction runs only once the room has stored at least
 *   `1 / growthRatio` of its last snapshot's size since that snapshot, so the
 *   work of compacting is at most `growthRatio` times the bytes written;
 * - **time**: a room spends at most `cpuShare` of wall-clock time compacting
 *   (after a compaction that took `d`, the next waits `d × (1 / cpuShare − 1)`).
 *
 * A document at its cap that wrote little since its last compaction is
 * therefore refused at once, without re-encoding anything.
 */
export interface CompactionBudget {
  /**
   * Whether a compaction may start now, given the bytes stored since the last
   * snapshot. `bytesOnly` skips the time rule (a room being unloaded compacts
   * once, and only when it wrote enough).
   */
  allows(bytesSinceSnapshot: number, now?: number, bytesOnly?: boolean): boolean
  /** Milliseconds until the time rule allows the next compaction (0 when it does now). */
  waitMs(now?: number): number
  /** Record a finished compaction: its duration and the snapshot size. */
  record(durationMs: number, snapshotBytes: number, now?: number): void
}

/** The budget's two knobs. */
export interface CompactionBudgetOptions {
  /** Compaction work per byte written, at most. Default 8. */
  growthRatio?: number
  /** Share of one core's time a room may spend compacting. Default 0.1. */
  cpuShare?: number
}

/**
 * Create the budget of one room whose stored snapshot is `snapshotBytes` now.
 *
 * @example
 * const budget = createCompactionBudget(storedBytes)
 * if (budget.allows(bytesSinceSnapshot)) { const t = performance.now(); compact(); budget.record(performance.now() - t, size) }
 */
export function createCompactionBudget(snapshotBytes: number, options: CompactionBudgetOptions = {}): CompactionBudget {
  const growthRatio = options.growthRatio ?? 8
  const cpuShare = options.cpuShare ?? 0.1
  let snapshot = snapshotBytes
  let notBefore = 0
  return {
    allows(bytesSinceSnapshot, now = performance.now(), bytesOnly = false) {
      return (bytesOnly || now >= notBefore) && bytesSinceSnapshot * growthRatio >= snapshot
    },
    waitMs(now = performance.now()) {
      return Math.max(0, notBefore - now)
    },
    record(durationMs, snapshotBytes, now = performance.now()) {
      snapshot = snapshotBytes
      notBefore = now + durationMs * (1 / cpuShare - 1)
    },
  }
}
