import { invalidInput, MemoryError } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkLimit, checkOneOf, checkOptions, checkString } from '../store/validate.js'
import { read } from '../store/write.js'
import type { Candidate, PostingFilter } from './ranking/bm25.js'
import { startEmbedQueue } from './vectors/embed-queue.js'
import { fuseRanked } from './ranking/fusion.js'
import { searchEngineOf, type SearchEngine } from './index/text-index.js'
import { normalize, topK } from './vectors/vector-topk.js'
import { loadProjectVectors } from './vectors/vector-fill.js'
import { rerankText, resolveRanked } from './ranking/text-rerank.js'
import { withAdjacentTurns } from './ranking/adjacent-turns.js'
import type { CacheAt } from './ranking/hit-text.js'
import { beginCachedRead } from './cache/query-cache.js'
import { loadOnUse } from '../store/load-on-use.js'

/** The kind of memory a search hit comes from. */
export type HitKind = 'message' | 'fact' | 'summary' | 'passage'
/** One search result. */
export interface Hit {
  kind: HitKind
  id: string
  projectId: string
  sessionId?: string
  text: string
  score: number
  createdAt: number
}
/** Options of `memory.search`. */
export interface SearchOptions {
  kinds?: HitKind[]
  limit?: number
  mode?: 'hybrid' | 'text' | 'vector'
  sessionId?: string
  excludeSessionId?: string
}
/**
 * `memory.search(projectId, query, options)`: best hits first. Unknown and
 * archived projects give no hits.
 *
 * @throws MemoryError `invalid_input` on bad arguments or `mode: 'vector' | 'hybrid'` without an embedder; `closed`.
 */
export type SearchFn = (projectId: string, query: string, options?: SearchOptions) => Promise<Hit[]>

const KINDS: readonly HitKind[] = ['message', 'fact', 'summary', 'passage']
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
]

/**
 * Creates the search function of a store (and starts its embed queue when an
 * embedder is set).
 */
export function createSearch(ctx: StoreContext): SearchFn {
  const engine = searchEngineOf(ctx.index)
  if (engine?.enabled && engine.embedder) startEmbedQueue(ctx, engine)
  if (engine) ctx.onClose.push(() => engine.stop())

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
    ctx.assertOpen()
    if (!engine?.enabled) throw new MemoryError('internal', 'This store was opened without a search index')

    const terms = [...new Set(engine.analyzer.terms(query))]
    const queryVector = mode === 'text' || query.trim() === '' ? undefined : await embedQuery(ctx, engine, query, mode)
    // The in-memory part of the index loads once, in its own transaction, before this query's.
    if (mode !== 'vector' && terms.length > 0 && !engine.state.ready) await engine.ready()
    // Before the transaction: a change emitted from here on keeps this query's reads out of the cache.
    const cached = beginCachedRead(ctx)
    const hits = await read(ctx, SEARCH_TABLES, async () => {
      const depth = mode === 'text' ? limit + 10 : Math.max(50, limit * 3)
      const loaded = new Map<string, Hit>()
      // The project check and the candidates' reads go at once (a search of an unknown project wastes its reads).
      const [searchable, text, vector] = await Promise.all([
        projectSearchable(ctx, projectId, cached),
        mode !== 'vector' && terms.length > 0 ? rerankText(ctx.db, engine, projectId, query, terms, filter, depth, loaded, ctx.now(), cached) : undefined,
        queryVector ? vectorCandidates(engine, projectId, queryVector, filter, depth) : undefined,
      ])
      if (!searchable) return []
      const lists = [text, vector].filter((l): l is Candidate[] => l !== undefined)
      if (lists.length === 0) return []
      const ranked = lists.length === 1 ? lists[0]! : fuseRanked(lists, depth)
      const hits = await resolveRanked(ctx.db, projectId, ranked, loaded, cached)
      if (ADJACENT && (!kinds || kinds.has('message'))) return withAdjacentTurns(ctx.db, projectId, hits, limit, cached)
      return hits.slice(0, limit)
    })
    if (engine.state.ready) warmSmallProject(ctx, engine, projectId, cached)
    return hits
  }
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
