import { Dexie } from 'dexie'
import { maxKey } from '../../store/keys.js'
import type { MessageRow } from '../../store/rows.js'
import type { StoreContext } from '../../store/store-context.js'
import type { CacheAt } from '../ranking/hit-text.js'
import { beginCachedRead, MAX_CACHED_CHARS } from './query-cache.js'
import { WINDOW_RADIUS } from '../ranking/turn-windows.js'

/*
 * A small project's conversations brought into the query cache after its first search, so that
 * the searches after it read no message rows and no turn windows (only their terms' postings):
 * the difference between a store that answers from memory and one that reads a few dozen rows a
 * query is most of a small store's search time. Loaded on use (search.ts starts it); it runs in
 * the background, a few sessions a transaction, most recently active first, and never waits
 * on or delays a query beyond sharing IndexedDB with it.
 */

/** Characters of message text a warm brings in at most: half the cache, so recent hits of other projects keep their place. */
const WARM_CHARS = MAX_CACHED_CHARS / 2
/** Sessions read a transaction (queries run between two). */
const SESSIONS_PER_STEP = 8

/**
 * Reads project `projectId`'s messages, session by session (most recently active first), into
 * the query cache with the turn window around each, until {@link WARM_CHARS} of text are in.
 * A change committed meanwhile keeps that step's rows out, as with any read; a closed store or
 * a failed read ends the warm (it is only a cache).
 */
export async function warmMessages(ctx: StoreContext, projectId: string): Promise<void> {
  const { db } = ctx
  const inBackground = <T>(tables: string[], fn: () => Promise<T>) => Dexie.ignoreTransaction(() => db.transaction('r', tables, fn))
  try {
    const sessions = await inBackground(['sessions'], () =>
      db.sessions.where('[projectId+lastActiveAt]').between([projectId, Dexie.minKey], [projectId, maxKey()]).reverse().primaryKeys(),
    )
    let chars = 0
    for (let i = 0; i < sessions.length && chars < WARM_CHARS; i += SESSIONS_PER_STEP) {
      ctx.assertOpen()
      const cached = beginCachedRead(ctx)
      const turns = await inBackground(['messages'], () =>
        Promise.all(
          sessions.slice(i, i + SESSIONS_PER_STEP).map((id) => db.messages.where('[sessionId+seq]').between([id, Dexie.minKey], [id, maxKey()]).toArray()),
        ),
      )
      for (const rows of turns) chars += keepSession(rows, cached)
      // Queries waiting on the thread go first.
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
  } catch {
    // Closed, or a read failed: queries read what they need, as without a warm.
  }
}

/** Keeps a session's rows (in seq order) and the window around each, as turn-windows.ts reads them; the characters kept. */
function keepSession(rows: readonly MessageRow[], cached: CacheAt): number {
  let chars = 0
  let from = 0
  let to = 0
  for (const row of rows) {
    cached.cache.keepMessage(row, cached.generation)
    chars += row.content.length
    while (rows[from]!.seq < row.seq - WINDOW_RADIUS) from++
    while (to < rows.length && rows[to]!.seq <= row.seq + WINDOW_RADIUS) to++
    cached.cache.keepWindow(
      row.id,
      rows.slice(from, to).map((m) => m.id),
      cached.generation,
    )
  }
  return chars
}
