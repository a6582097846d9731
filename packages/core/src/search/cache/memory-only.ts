import type { EngramDb } from '../../catalog/schema.js'
import type { CacheAt } from '../ranking/hit-text.js'
import type { Hit, SearchEngine } from '../types.js'

/*
 * A search answered from the worker's memory alone, without an IndexedDB transaction. Opening a
 * read transaction over the search tables and waiting for it to complete costs a round trip to
 * the browser's storage process even when every read inside it is answered by a cache: on a
 * warm small project that round trip is most of a query. So a search first runs its ranking
 * over stand-ins for the database that refuse every read; if the ranking needed none (the
 * index state, the posting lists, the records and turn windows of its hits all cached) its
 * answer is the one the transaction would have given, and if it needed one it is abandoned and
 * the search runs again in a transaction.
 */

/** What a ranking reads through: the store's tables and the search engine (whose tables are the store's). */
export interface RankSource {
  db: EngramDb
  engine: SearchEngine
  /** Whether the project exists and is not archived. */
  searchable(): Promise<boolean>
}

/** Thrown by a stand-in table on first touch: the ranking needs a read, so it cannot run from memory. */
class NeedsRead extends Error {
  constructor() {
    super('this search needs a read from IndexedDB')
  }
}

/** A database on which any property access (a table, a transaction) throws {@link NeedsRead}. */
const refusing = new Proxy(
  {},
  {
    get() {
      throw new NeedsRead()
    },
  },
) as EngramDb

/**
 * Ranks with `rank(source)` from memory: the source's tables refuse every read. Returns the
 * hits, or undefined when the ranking needed a read or a commit (or a cache invalidation)
 * came while it ran; then the caller ranks again in a transaction.
 */
export async function rankFromMemory(
  engine: SearchEngine,
  projectId: string,
  cached: CacheAt,
  rank: (source: RankSource) => Promise<Hit[]>,
): Promise<Hit[] | undefined> {
  const { state } = engine
  const searchable = cached.cache.project(projectId)
  if (!state.ready || searchable === undefined) return undefined
  const { epoch, blockEpoch } = state
  const source: RankSource = {
    db: refusing,
    // The engine's own methods close over the real tables; what the ranking reads through `db` and `t` is refused.
    engine: Object.create(engine, { db: { value: refusing }, t: { value: refusing } }) as SearchEngine,
    searchable: async () => searchable,
  }
  let hits: Hit[]
  try {
    hits = await rank(source)
  } catch (error) {
    if (error instanceof NeedsRead) return undefined
    throw error
  }
  const unchanged = state.ready && state.epoch === epoch && state.blockEpoch === blockEpoch && cached.cache.generation === cached.generation
  return unchanged ? hits : undefined
}
