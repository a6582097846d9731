import type { EngramDb } from '../../catalog/schema.js'
import type { MessageRow } from '../../store/rows.js'
import type { CacheAt } from './hit-text.js'

/** How far a window reaches around its message: this many turns of its session either side. */
export const WINDOW_RADIUS = 2

/** A message and the turns of its session within {@link WINDOW_RADIUS} of it (itself included), in seq order. */
export interface TurnWindow {
  row: MessageRow
  around: MessageRow[]
}

/** The live turns of a window (a deleted message leaves a tombstone without content in its place). */
export function liveTurns(window: TurnWindow): MessageRow[] {
  return window.around.filter((m) => m.deletedAt === undefined)
}

/**
 * The rows of messages `ids` and the turns around each (by id; a message that
 * is gone has no entry). Rows and windows the query cache holds are not read;
 * the others are read in two steps (the rows, then one range per window, all
 * ranges at once) and kept. Runs inside the caller's read transaction.
 */
export async function turnWindows(db: EngramDb, ids: readonly string[], cached?: CacheAt): Promise<Map<string, TurnWindow>> {
  const out = new Map<string, TurnWindow>()
  if (ids.length === 0) return out
  const rows = new Map<string, MessageRow>()
  const missing: string[] = []
  for (const id of ids) {
    const row = cached?.cache.message(id)
    if (row) rows.set(id, row)
    else missing.push(id)
  }
  if (missing.length > 0) {
    for (const row of await db.messages.bulkGet(missing)) {
      if (!row) continue
      rows.set(row.id, row)
      cached?.cache.keepMessage(row, cached.generation)
    }
  }
  const unread: MessageRow[] = []
  for (const id of ids) {
    const row = rows.get(id)
    if (!row || out.has(id)) continue
    const around = cached ? windowFromCache(cached, id) : undefined
    if (around) out.set(id, { row, around })
    else unread.push(row)
  }
  // One range read per window (its session, seq − radius to seq + radius): fewer requests than a get per slot.
  const ranges = await Promise.all(
    unread.map((row) =>
      db.messages
        .where('[sessionId+seq]')
        .between([row.sessionId, row.seq - WINDOW_RADIUS], [row.sessionId, row.seq + WINDOW_RADIUS], true, true)
        .toArray(),
    ),
  )
  unread.forEach((row, i) => {
    const around = ranges[i]!
    out.set(row.id, { row, around })
    if (!cached) return
    for (const m of around) cached.cache.keepMessage(m, cached.generation)
    cached.cache.keepWindow(
      row.id,
      around.map((m) => m.id),
      cached.generation,
    )
  })
  return out
}

/** The window around `id` from the cache, when it and every row in it are held. */
function windowFromCache(cached: CacheAt, id: string): MessageRow[] | undefined {
  const ids = cached.cache.window(id)
  if (!ids) return undefined
  const around: MessageRow[] = []
  for (const m of ids) {
    const row = cached.cache.message(m)
    if (!row) return undefined
    around.push(row)
  }
  return around
}
