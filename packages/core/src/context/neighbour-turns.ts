import type { Message } from '../messages.js'
import type { Hit } from '../search/search.js'
import type { StoreContext } from '../store-context.js'
import { read } from '../write.js'

/**
 * How far from a hit its neighbours reach, in turns of its session: the
 * answer often sits in the reply (one turn on) or after a follow-up question
 * (two turns on). Farther neighbours come later in priority, so only a
 * larger budget shows them.
 */
export const NEIGHBOUR_RADIUS = 2

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
  return read(ctx, ['messages'], async () => {
    const rows = await ctx.db.messages.bulkGet(seeds.map((h) => h.id))
    // One range read per hit (its session, seq − radius to seq + radius): fewer requests than a get per slot.
    const around = await Promise.all(
      rows.map((row) =>
        row
          ? ctx.db.messages
              .where('[sessionId+seq]')
              .between([row.sessionId, row.seq - NEIGHBOUR_RADIUS], [row.sessionId, row.seq + NEIGHBOUR_RADIUS], true, true)
              .toArray()
          : [],
      ),
    )
    rows.forEach((row, i) => {
      if (!row) return
      const near = (around[i] ?? [])
        .filter((m) => m.seq !== row.seq && m.projectId === row.projectId)
        .map((m) => ({ message: m as Message, distance: Math.abs(m.seq - row.seq) }))
      // Nearest first; at one distance the turn before, then the one after.
      near.sort((a, b) => a.distance - b.distance || a.message.seq - b.message.seq)
      out.set(row.id, near)
    })
    return out
  })
}
