import { withoutExpired } from './expired.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkLimit, checkOneOf, checkOptions, checkString } from '../store/validate.js'
import { read } from '../store/write.js'
import type { Candidate, PostingFilter } from './ranking/bm25.js'
import { startEmbedQueue } from './vectors/embed-queue.js'
import { fuseScores, HYBRID } from './ranking/fusion.js'
import { anchoredTime, anchoredWindow, queryTimeWindow, type TimeWindow } from './analysis/time-expressions.js'
import { inWindow, TIME_WEIGHT } from './ranking/time-boost.js'
import { searchEngineOf, type SearchEngine } from './index/text-index.js'
import { normalize, topK } from './vectors/vector-topk.js'
import { loadProjectVectors } from './vectors/vector-fill.js'
import { type CandidateMemo, rerankText, resolveRanked } from './ranking/text-rerank.js'
import { withAdjacentTurns } from './ranking/adjacent-turns.js'
import { rankInTiers } from './ranking/ranking-tiers.js'
import type { CacheAt } from './ranking/hit-text.js'
import { beginCachedRead } from './cache/query-cache.js'
import { rankFromMemory, type RankSource } from './cache/memory-only.js'
import { loadOnUse } from '../store/load-on-use.js'
import type { Hit, HitKind, SearchFn } from './types.js'

export type { Hit, HitKind, SearchFn, SearchOptions } from './types.js'

const KINDS: readonly HitKind[] = ['message', 'fact', 'summary', 'passage', 'entity', 'relation', 'observation']
const MODES = ['hybrid', 'text', 'vector'] as const
/** Longest query accepted (characters). */
export const MAX_QUERY_LENGTH = 10_000
/** Whether turns adjacent to the best message hits join the ranking. */
const ADJACENT = true
const SEARCH_TABLES = [
  'projects',
  'textDocs',
  'textBlocks',
  'textSegs',
  'textDirs',
  'textCorpus',
  'meta',
  'vectors',
  'messages',
  'facts',
  'summaries',
  'passages',
  'entities',
  'relations',
  'observations',
]

/**
 * Creates the search function of a store (and starts its embed queue when an
 * embedder is set).
 */
export function createSearch(ctx: StoreContext): SearchFn {
  const engine = searchEngineOf(ctx.index)
  if (engine?.enabled && engine.embedder) startEmbedQueue(ctx, engine)
  if (engine) ctx.onClose.push(() => engine.stop())
  const queryVectors = new QueryVectors()

  return async function search(projectId, query, options) {
    checkId('projectId', projectId)
    checkString('query', query, { maxLength: MAX_QUERY_LENGTH })
    const opts = checkOptions('options', options)
    let kinds: Set<HitKind> | undefined
    if (opts.kinds !== undefined) {
      if (!Array.isArray(opts.kinds) || opts.kinds.length === 0) throw invalidInput('options.kinds must be a non-empty array of kinds')
      kinds = new Set(opts.kinds.map((k) => checkOneOf('options.kinds[]', k, KINDS)))
    }
    const limit = checkLimit('options.limit', opts.limit, 10, 1000)
    const embedder = engine?.embedder
    const mode = opts.mode === undefined ? (embedder ? 'hybrid' : 'text') : checkOneOf('options.mode', opts.mode, MODES)
    if (mode !== 'text' && !embedder) throw invalidInput(`mode '${mode}' needs an embedder: pass one to openMemory({ embedder }) or use mode 'text'`)
    const filter: PostingFilter = {}
    if (kinds) filter.kinds = kinds
    if (opts.sessionId !== undefined) filter.sessionId = checkId('options.sessionId', opts.sessionId)
    if (opts.excludeSessionId !== undefined) filter.excludeSessionId = checkId('options.excludeSessionId', opts.excludeSessionId)
    if (opts.now !== undefined && (typeof opts.now !== 'number' || !Number.isFinite(opts.now)))
      throw invalidInput('options.now must be a time in epoch milliseconds')
    ctx.assertOpen()
    if (!engine?.enabled) throw new MemoryError('internal', 'This store was opened without a search index')

    const terms = [...new Set(engine.analyzer.terms(query))]
    const now = opts.now ?? ctx.now()
    // "two weeks before the concert": the event is searched first, and its time sets the window.
    const anchored = queryTimeWindow(query, now) ? undefined : anchoredTime(query)
    let window: TimeWindow | undefined
    if (anchored) {
      const [event] = await search(projectId, anchored.anchor, { ...opts, limit: 1, now })
      if (event) window = anchoredWindow(anchored, event.createdAt)
    }
    const when = window ?? (mode === 'text' ? undefined : queryTimeWindow(query, now))
    // The words naming a time say when, not what: the vector is of the rest, and the window lifts what was written then.
    const vectorQuery = when ? query.replace(when.text, ' ') : query
    const queryVector =
      mode === 'text' || vectorQuery.trim() === '' || (mode === 'hybrid' && keywordQuery(query, terms))
        ? undefined
        : (queryVectors.get(vectorQuery) ?? queryVectors.keep(vectorQuery, await embedQuery(ctx, engine, vectorQuery, mode)))
    // The in-memory part of the index loads once, in its own transaction, before this query's.
    if (mode !== 'vector' && terms.length > 0 && !engine.state.ready) await engine.ready()
    // Before the transaction: a change emitted from here on keeps this query's reads out of the cache.
    const cached = beginCachedRead(ctx)
    // BM25 lists a ranking from memory computed before it needed a read: the transaction's ranking reuses them.
    const bm25: CandidateMemo = new Map()
    /** The best `cap` hits of a ranking at that depth (ranking-tiers.ts), read through `source`. */
    const rankAt = async (cap: number, { db, engine: e, searchable: isSearchable }: RankSource): Promise<Hit[]> => {
      const loaded = new Map<string, Hit>()
      const depth = mode === 'text' ? cap + 10 : Math.max(50, cap * 3)
      // The project check and the candidates' reads go at once (a search of an unknown project wastes its reads).
      const [searchable, text, vector] = await Promise.all([
        isSearchable(),
        mode !== 'vector' && terms.length > 0 ? rerankText(db, e, projectId, query, terms, filter, depth, loaded, now, cached, window, bm25) : undefined,
        queryVector
          ? vectorCandidates(e, projectId, queryVector, filter, when ? Math.max(depth, 300) : depth).then((list) => (when ? boostVectors(list, when) : list))
          : undefined,
      ])
      if (!searchable) return []
      if (!text && !vector) return []
      const ranked = text && vector ? fuseScores(text, vector, depth) : (text ?? vector)!
      const hits = await resolveRanked(db, projectId, ranked, loaded, cached)
      if (ADJACENT && (!kinds || kinds.has('message'))) return withAdjacentTurns(db, projectId, hits, cap, cached)
      return hits.slice(0, cap)
    }
    const fromStore: RankSource = { db: ctx.db, engine, searchable: () => projectSearchable(ctx, projectId, cached) }
    // From memory when every read it needs is cached (memory-only.ts); else each tier a transaction (an async function, so Dexie follows its awaits as part of it).
    const hits =
      (await rankFromMemory(engine, projectId, cached, (source) => rankInTiers(limit, (cap) => rankAt(cap, source)))) ??
      (await rankInTiers(limit, (cap) => read(ctx, SEARCH_TABLES, async () => await rankAt(cap, fromStore))))
    if (engine.state.ready) warmSmallProject(ctx, engine, projectId, cached)
    return withoutExpired(ctx, hits)
  }
}

/** Query vectors most recently embedded: `context.build` searches one query more than once, and a model call costs tens of ms. */
class QueryVectors {
  private readonly vectors = new Map<string, Float32Array>()
  get(query: string): Float32Array | undefined {
    const v = this.vectors.get(query)
    if (v) {
      this.vectors.delete(query)
      this.vectors.set(query, v)
    }
    return v
  }
  keep(query: string, vector: Float32Array | undefined): Float32Array | undefined {
    if (!vector) return undefined
    this.vectors.set(query, vector)
    if (this.vectors.size > 64) this.vectors.delete(this.vectors.keys().next().value!)
    return vector
  }
}

const QUESTION_WORDS = /\b(what|which|who|whom|whose|where|when|why|how|did|does|do|is|are|was|were|can|could|should|would)\b/i

/** A short query of plain keywords (no question): the text list alone answers it, and the vector part is skipped. */
function keywordQuery(query: string, terms: readonly string[]): boolean {
  return terms.length > 0 && terms.length <= HYBRID.keywordTerms && !QUESTION_WORDS.test(query)
}

/** The vector list with what was written inside the query's time window raised, as the text list's window does, best `depth` kept. */
function boostVectors(list: Candidate[], when: NonNullable<ReturnType<typeof queryTimeWindow>>): Candidate[] {
  return list.map((c) => (inWindow(when, c.at) ? { ...c, score: c.score * (1 + TIME_WEIGHT) } : c)).sort((a, b) => b.score - a.score)
}

/** Projects of at most this many indexed documents get their messages read into the query cache after their first search. */
const WARM_DOCS = 10_000
const loadWarm = loadOnUse('message warm', () => import('./cache/message-warm.js'))

/** Starts warming a small project's messages (message-warm.ts), once per emptying of the cache, after this search. */
function warmSmallProject(ctx: StoreContext, engine: SearchEngine, projectId: string, cached: CacheAt): void {
  const docs = engine.state.stats(projectId)?.docs
  if (docs === undefined || docs === 0 || docs > WARM_DOCS || !cached.cache.firstWarm(projectId)) return
  setTimeout(() => {
    loadWarm()
      .then(({ warmMessages }) => warmMessages(ctx, projectId))
      .catch(() => undefined)
      .then(() => engine.onWarm?.(projectId))
  }, 0)
}

/** Whether the project exists and is not archived (from the query cache when it knows). */
async function projectSearchable(ctx: StoreContext, projectId: string, cached: CacheAt): Promise<boolean> {
  const known = cached.cache.project(projectId)
  if (known !== undefined) return known
  const project = await ctx.db.projects.get(projectId)
  const searchable = project !== undefined && project.archivedAt === undefined
  cached.cache.keepProject(projectId, searchable, cached.generation)
  return searchable
}

async function embedQuery(ctx: StoreContext, engine: SearchEngine, query: string, mode: string): Promise<Float32Array | undefined> {
  try {
    const [vector] = await engine.embedder!.embed([query])
    if (!(vector instanceof Float32Array) || vector.length !== engine.embedder!.dimensions)
      throw new Error('embed() returned no vector of the declared dimensions')
    ctx.status.recover('embedder')
    return normalize(Float32Array.from(vector))
  } catch (error) {
    // Hybrid degrades to full-text when the embedder is down (and says so in memory.status); vector-only cannot.
    ctx.status.fail('embedder', error)
    if (mode === 'hybrid') return undefined
    throw new MemoryError('internal', 'The embedder failed to embed the query', { cause: error })
  }
}

async function vectorCandidates(engine: SearchEngine, projectId: string, query: Float32Array, filter: PostingFilter, depth: number): Promise<Candidate[]> {
  let pv = engine.vectors.get(projectId)
  if (!pv) {
    const epoch = engine.vectors.epoch
    const rows = await engine.t.vectors.where('projectId').equals(projectId).toArray()
    pv = loadProjectVectors(engine.vectors, projectId, query.length, rows, epoch)
  }
  const found = pv
  return topK(found, query, depth, filter).map(([i, similarity]) => {
    const c: Candidate = { docId: found.docIds[i]!, kind: found.kinds[i]!, at: found.ats[i]!, score: similarity }
    const sid = found.sids[i]
    if (sid !== undefined) c.sid = sid
    return c
  })
}
