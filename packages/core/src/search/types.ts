/*
 * The types the search folder shares: a hit, the options of a search, and the engine the
 * index, ranking, vectors and cache read. One leaf file, so the folder's files import their
 * types from here instead of from the modules that implement them.
 */
import type { EngramDb } from '../catalog/schema.js'
import type { Embedder, TextIndex } from '../store/store-context.js'
import type { Analyzer } from './analysis/analyzer.js'
import type { IndexState } from './index/index-state.js'
import type { IndexTables } from './index/text-index.js'
import type { VectorCache } from './vectors/vector-cache.js'

/** The kind of memory a search hit comes from. */
export type HitKind = 'message' | 'fact' | 'summary' | 'passage' | 'entity' | 'relation' | 'observation'
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
  /** The time that relative expressions in the query ("last month", "two weeks ago") count from (epoch ms); default: the store's clock. */
  now?: number
}
/**
 * `memory.search(projectId, query, options)`: best hits first. Unknown and
 * archived projects give no hits.
 *
 * @throws MemoryError `invalid_input` on bad arguments or `mode: 'vector' | 'hybrid'` without an embedder; `closed`.
 */
export type SearchFn = (projectId: string, query: string, options?: SearchOptions) => Promise<Hit[]>

/** The text index plus what search reads: the analyzer, the in-memory state and the vector cache. */
export interface SearchEngine extends TextIndex {
  readonly db: EngramDb
  readonly t: IndexTables
  readonly analyzer: Analyzer
  readonly state: IndexState
  readonly vectors: VectorCache
  readonly embedder: Embedder | undefined
  /** How vectors are stored: int8 (a quarter of the bytes) or as embedded. */
  readonly vectorPrecision: 'int8' | 'float32'
  /** False for the benchmark baseline store (no index at all). */
  readonly enabled: boolean
  /** Loads the in-memory state (tail, dead documents, corpus statistics) if not yet loaded. */
  ready(): Promise<void>
  /** Merges the whole unmerged tail into posting blocks now; resolves when done. */
  merge(): Promise<void>
  /** Stops background merging (on close). */
  stop(): void
  /** Called after a transaction that queued documents for embedding commits. */
  onEnqueue: () => void
  /** Called after a merge of the tail into posting blocks commits. */
  onMerged: () => void
  /** Called when a warm of a project's messages has ended (tests). */
  readonly onWarm: ((projectId: string) => void) | undefined
}
