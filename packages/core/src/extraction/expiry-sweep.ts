import type { Memory } from '../compose/memory.js'
import { reportError } from '../store/report-error.js'
import type { StoreContext } from '../store/store-context.js'
import { read, write } from '../store/write.js'
import { observationTables, observationsTable, purgeObservations } from '../observations/observation-writes.js'

/** How often the sweep looks for expired memory (ms). */
export const SWEEP_INTERVAL_MS = 60_000

/** The expiry sweep of a store. */
export interface ExpirySweep {
  /** Purges every fact, passage and observation whose `expiresAt` has passed; returns how many. */
  sweep(): Promise<number>
}

/**
 * Purges expired memory: facts by `facts.purge` (in a synced project a content-free tombstone
 * that syncs, so the purge reaches every device), passages by `archive.delete`, observations
 * as text-free tombstones. Expired memory has already left search and context; this frees it.
 * Runs at start and every {@link SWEEP_INTERVAL_MS}.
 */
export function startExpirySweep(ctx: StoreContext, memory: Memory): ExpirySweep {
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<number> | undefined
  ctx.onClose.push(() => {
    closed = true
    if (timer !== undefined) clearTimeout(timer)
  })

  async function sweepOnce(): Promise<number> {
    const now = ctx.now()
    const [facts, passages, observations] = await read(ctx, ['facts', 'passages', 'observations'], () =>
      Promise.all([
        ctx.db.facts.where('expiresAt').belowOrEqual(now).toArray(),
        ctx.db.passages.where('expiresAt').belowOrEqual(now).primaryKeys(),
        observationsTable(ctx).where('expiresAt').belowOrEqual(now).toArray(),
      ]),
    )
    let n = 0
    for (const f of facts) if (!f.purged) n += await memory.facts.purge(f.projectId, f.key)
    for (const id of passages) if (await memory.archive.delete(id)) n++
    if (observations.some((o) => o.deletedAt === undefined)) n += await write(ctx, observationTables(ctx), (w) => purgeObservations(ctx, w, observations, now))
    return n
  }

  function sweep(): Promise<number> {
    running ??= sweepOnce().finally(() => {
      running = undefined
    })
    return running
  }

  function loop(): void {
    if (closed) return
    sweep()
      .catch((error: unknown) => {
        if (!closed) reportError(error)
      })
      .finally(() => {
        if (!closed) timer = setTimeout(loop, SWEEP_INTERVAL_MS)
      })
  }
  timer = setTimeout(loop, 0)
  return { sweep }
}
