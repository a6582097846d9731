import type { Message } from '../messages/messages.js'
import type { Hit } from '../search/search.js'
import type { StoreContext } from '../store/store-context.js'
import { beginCachedRead } from '../search/cache/query-cache.js'
import { liveTurns, turnWindows, WINDOW_RADIUS } from '../search/ranking/turn-windows.js'
import { read } from '../store/write.js'

/**
 * How far from a hit its neighbours reach, in turns of its session: the
 * answer often sits in the reply (one turn on) or after a follow-up question
 * (two turns on). Farther neighbours come later in priority, so only a
 * larger budget shows them.
 */
export const NEIGHBOUR_RADIUS = WINDOW_RADIUS

/** A turn near a hit, and how many turns away it is. */
export interface Neighbour {
  message: Message
  distance: number
}

/**
 * The turns within {@link NEIGHBOUR_RADIUS} of each message hit in its
 * session, nearest first (before, then after, at each distance), by hit id.
 */
export async function neighbourTurns(ctx: StoreContext, seeds: readonly Hit[]): Promise<Map<string, Neighbour[]>> {
  const out = new Map<string, Neighbour[]>()
  if (seeds.length === 0) return out
  // Before the transaction: a change emitted from here on keeps these reads out of the cache.
  const cached = beginCachedRead(ctx)
  return read(ctx, ['messages'], async () => {
    const windows = await turnWindows(
      ctx.db,
      seeds.map((h) => h.id),
      cached,
    )
    for (const window of windows.values()) {
      const row = window.row
      const near = liveTurns(window)
        .filter((m) => m.seq !== row.seq && m.projectId === row.projectId)
        // A copy: rows in the query cache are shared, and a build caches its lines by record.
        .map((m) => ({ message: { ...m } as Message, distance: Math.abs(m.seq - row.seq) }))
      // Nearest first; at one distance the turn before, then the one after.
      near.sort((a, b) => a.distance - b.distance || a.message.seq - b.message.seq)
      out.set(row.id, near)
    }
    return out
  })
}
