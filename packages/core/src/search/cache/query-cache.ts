import type { Change } from '../../store/change-feed.js'
import type { MessageRow } from '../../store/rows.js'
import type { StoreContext } from '../../store/store-context.js'
import type { HitKind } from '../types.js'
import { searchEngineOf } from '../index/text-index.js'
import { foreignWritesOf } from './foreign-writes.js'

/** A record behind a hit, as queries show it (a message keeps its whole row: its turns are read around it). */
export interface CachedRecord {
  projectId: string
  text: string
  sessionId?: string
  message?: MessageRow
}

/** Characters of record text the cache holds at most (about 8 MB as JavaScript strings, plus ~200 bytes a record). */
export const MAX_CACHED_CHARS = 4_000_000
/** Turn windows (the ids of the turns around a message) the cache holds at most. */
export const MAX_CACHED_WINDOWS = 20_000
/** Projects whose searchability (exists, not archived) the cache holds at most. */
export const MAX_CACHED_PROJECTS = 1_000

/** Kinds of the change feed whose records hits show, by the hit kind they come back as. */
const HIT_KINDS: Partial<Record<Change['kind'], HitKind>> = {
  messages: 'message',
  facts: 'fact',
  summaries: 'summary',
  passages: 'passage',
  entities: 'entity',
  relations: 'relation',
  observations: 'observation',
}

/**
 * What queries read again and again, kept in memory (never persisted): the
 * records of recently returned hits (text, session, a message's whole row),
 * the ids of the turns around recent message hits, and whether a project is
 * searchable. Bounded (least recently used first out); invalidated by the
 * store's change feed (a changed record, any message or session change for
 * the turn windows, a changed project) and cleared whenever the index is
 * rewritten wholesale (a reset, a removed project), so a stale entry can
 * never outlive the write that made it stale. A merge keeps it: it refolds
 * postings and changes no record, so the records read before it still hold
 * (an app that writes a turn and searches again keeps what it read).
 *
 * A read fills the cache only with the `generation` it started at: a change
 * emitted while the read ran makes its rows possibly old, and they are not
 * kept.
 */
export class QueryCache {
  /** Bumped by every invalidation; a fill from a read that started before it is dropped. */
  generation = 0
  private rewriteEpoch = -1
  private readonly records = new Map<string, CachedRecord>()
  private chars = 0
  private readonly windows = new Map<string, string[]>()
  private readonly projects = new Map<string, boolean>()
  private readonly warmed = new Set<string>()

  constructor(
    private readonly maxChars = MAX_CACHED_CHARS,
    private readonly maxWindows = MAX_CACHED_WINDOWS,
  ) {}

  /** Starts a read: clears the cache if the index was rewritten since (IndexState.rewriteEpoch), and returns the generation to fill with. */
  begin(rewriteEpoch: number): number {
    if (rewriteEpoch !== this.rewriteEpoch) {
      if (this.rewriteEpoch !== -1) this.clear()
      this.rewriteEpoch = rewriteEpoch
    }
    return this.generation
  }

  /** The cached record `kind:id`, if any. */
  record(key: string): CachedRecord | undefined {
    const hit = this.records.get(key)
    if (hit) {
      this.records.delete(key)
      this.records.set(key, hit)
    }
    return hit
  }

  /** Keeps a record read at `generation` (dropped if a change came since). */
  keepRecord(key: string, record: CachedRecord, generation: number): void {
    if (generation !== this.generation) return
    this.dropRecord(key)
    this.records.set(key, record)
    this.chars += record.text.length
    for (const [k, victim] of this.records) {
      if (this.chars <= this.maxChars) break
      this.records.delete(k)
      this.chars -= victim.text.length
    }
  }

  /** The cached message row `id`, if any. */
  message(id: string): MessageRow | undefined {
    return this.record(`message:${id}`)?.message
  }

  /** Keeps a message row read at `generation`. */
  keepMessage(row: MessageRow, generation: number): void {
    this.keepRecord(`message:${row.id}`, { projectId: row.projectId, text: row.content, sessionId: row.sessionId, message: row }, generation)
  }

  /** The ids of the turns around message `id` (its session, in seq order, itself included), if cached. */
  window(id: string): readonly string[] | undefined {
    return this.windows.get(id)
  }

  /** Keeps the turns around message `id` read at `generation`. */
  keepWindow(id: string, ids: string[], generation: number): void {
    if (generation !== this.generation) return
    this.windows.delete(id)
    this.windows.set(id, ids)
    if (this.windows.size > this.maxWindows) this.windows.delete(this.windows.keys().next().value!)
  }

  /** Whether project `id` exists and is not archived, if cached. */
  project(id: string): boolean | undefined {
    return this.projects.get(id)
  }

  /** Keeps whether project `id` is searchable, read at `generation`. */
  keepProject(id: string, searchable: boolean, generation: number): void {
    if (generation !== this.generation) return
    this.projects.set(id, searchable)
    if (this.projects.size > MAX_CACHED_PROJECTS) this.projects.delete(this.projects.keys().next().value!)
  }

  /** True the first time it is asked about a project since the cache was emptied: whether to warm the project's messages (message-warm.ts). */
  firstWarm(projectId: string): boolean {
    if (this.warmed.has(projectId)) return false
    this.warmed.add(projectId)
    return true
  }

  /** Forgets what a committed batch of changes made stale. */
  invalidate(batch: readonly Change[]): void {
    this.generation++
    for (const c of batch) {
      const kind = HIT_KINDS[c.kind]
      if (kind) this.dropRecord(`${kind}:${c.id}`)
      // A new, moved or removed turn changes the windows around its neighbours: the session is not in the change.
      if (c.kind === 'messages' || c.kind === 'sessions') this.windows.clear()
      if (c.kind === 'projects') this.projects.delete(c.id)
    }
  }

  /** Forgets everything. */
  clear(): void {
    this.generation++
    this.records.clear()
    this.chars = 0
    this.windows.clear()
    this.projects.clear()
    this.warmed.clear()
  }

  /** Records held (tests). */
  get size(): number {
    return this.records.size
  }

  private dropRecord(key: string): void {
    const old = this.records.get(key)
    if (!old) return
    this.records.delete(key)
    this.chars -= old.text.length
  }
}

const caches = new WeakMap<StoreContext, QueryCache>()

/**
 * The query cache of a store, created on first use and kept current by its
 * change feed until the store closes.
 */
export function queryCacheOf(ctx: StoreContext): QueryCache {
  let cache = caches.get(ctx)
  if (!cache) {
    const created = new QueryCache()
    cache = created
    caches.set(ctx, created)
    const unsubscribe = ctx.feed.subscribe({}, (batch) => created.invalidate(batch))
    // Another connection's write: its records and windows may be stale, and the index state it was read with reloads.
    const unsubscribeForeign = foreignWritesOf(ctx)?.subscribe(() => created.clear())
    ctx.onClose.push(() => {
      unsubscribe()
      unsubscribeForeign?.()
      created.clear()
    })
  }
  return cache
}

/** Starts a read on the store's query cache (see {@link QueryCache.begin}); the generation to fill with. */
export function beginCachedRead(ctx: StoreContext): { cache: QueryCache; generation: number } {
  const cache = queryCacheOf(ctx)
  const engine = searchEngineOf(ctx.index)
  return { cache, generation: cache.begin(engine ? engine.state.rewriteEpoch : 0) }
}
