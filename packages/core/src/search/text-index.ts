import type { Dexie, Transaction } from 'dexie'
import type { EngramDb } from '../schema.js'
import type { Embedder, IndexedDoc, TextIndex } from '../store-context.js'
import type { WriteScope } from '../write.js'
import { englishAnalyzer, type Analyzer } from './analyzer.js'
import { postingsOf, termKey, type CorpusStatsRow, type EmbedQueueRow, type SearchDocRow, type VectorRow } from './index-rows.js'
import { PostingCache, type IndexDelta } from './posting-cache.js'
import { VectorCache } from './vector-cache.js'

/** The search-index tables, typed (schema.ts declares them untyped). */
export interface IndexTables {
  searchDocs: Dexie.Table<SearchDocRow, string>
  corpusStats: Dexie.Table<CorpusStatsRow, string>
  vectors: Dexie.Table<VectorRow, string>
  embedQueue: Dexie.Table<EmbedQueueRow, number>
}

/** Options of {@link createTextIndex}, as given to openMemory. */
export interface TextIndexOptions {
  embedder?: Embedder
  analyzer?: Analyzer
  /** Internal (benchmarks only): `false` gives a store without a full-text index. */
  textIndex?: boolean
}

/** The text index plus what search reads: the analyzer and the in-memory caches. */
export interface SearchEngine extends TextIndex {
  readonly db: EngramDb
  readonly t: IndexTables
  readonly analyzer: Analyzer
  readonly cache: PostingCache
  readonly vectors: VectorCache
  readonly embedder: Embedder | undefined
  /** False for the benchmark baseline store (no index at all). */
  readonly enabled: boolean
  /** Called after a transaction that queued documents for embedding commits. */
  onEnqueue: () => void
}

/** Kinds that get embeddings when an embedder is set. */
const EMBEDDED_KINDS = new Set(['message', 'passage'])
/** Every table the index writes; callers add them to their write transactions. */
export const INDEX_TABLES = ['searchDocs', 'corpusStats', 'vectors', 'embedQueue'] as const

const engines = new WeakMap<TextIndex, SearchEngine>()

/** The search engine behind a store's text index, when it has one. */
export function searchEngineOf(index: TextIndex): SearchEngine | undefined {
  return engines.get(index)
}

/** What one transaction did to the index: replayed on the caches after it commits. */
interface TxLog { deltas: IndexDelta[]; embed: boolean; stats: Map<string, CorpusStatsRow> }

/**
 * Creates the incremental BM25 index kept in IndexedDB. `put` and `remove`
 * run inside the caller's write transaction, so postings commit and roll back
 * with the record they index; opening a store reads nothing up front.
 *
 * @example const index = createTextIndex(db, { analyzer: createAnalyzer({ stem: (w) => w }) })
 */
export function createTextIndex(db: EngramDb, options: Readonly<Record<string, unknown>> | TextIndexOptions = {}): SearchEngine {
  const opts = options as TextIndexOptions
  const t = db as unknown as IndexTables
  const enabled = opts.textIndex !== false
  const analyzer = opts.analyzer ?? englishAnalyzer
  const embedder = opts.embedder
  const cache = new PostingCache()
  const vectors = new VectorCache()
  const logs = new WeakMap<Transaction, TxLog>()

  function logOf(w: WriteScope): TxLog {
    let log = logs.get(w.tx)
    if (!log) {
      const created: TxLog = { deltas: [], embed: false, stats: new Map() }
      log = created
      logs.set(w.tx, created)
      w.tx.on('complete', () => {
        cache.apply(created.deltas)
        vectors.apply(created.deltas)
        if (created.embed) engine.onEnqueue()
      })
    }
    return log
  }

  /** The corpus statistics of a project, read once per transaction. */
  async function statsOf(log: TxLog, projectId: string): Promise<CorpusStatsRow> {
    let stats = log.stats.get(projectId)
    if (!stats) {
      stats = (await t.corpusStats.get(projectId)) ?? { projectId, docs: 0, length: 0 }
      log.stats.set(projectId, stats)
    }
    return stats
  }

  async function removeDoc(log: TxLog, doc: SearchDocRow): Promise<void> {
    const stats = await statsOf(log, doc.projectId)
    stats.docs = Math.max(0, stats.docs - 1)
    stats.length = Math.max(0, stats.length - doc.len)
    // Vectors and queue rows may exist from a session opened with an embedder: always clear them.
    await Promise.all([
      t.searchDocs.delete(doc.docId),
      t.corpusStats.put({ ...stats }),
      t.vectors.delete(doc.docId),
      t.embedQueue.where('docId').equals(doc.docId).delete(),
    ])
    log.deltas.push({ op: 'remove', projectId: doc.projectId, docId: doc.docId, terms: doc.terms })
  }

  const engine: SearchEngine = {
    db, t, analyzer, cache, vectors, embedder, enabled,
    tables: enabled ? INDEX_TABLES : [],
    onEnqueue: () => {},

    async put(w, doc: IndexedDoc) {
      if (!enabled) return
      const log = logOf(w)
      const tokens = analyzer.terms(doc.text)
      const tf = new Map<string, number>()
      for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1)
      const old = await t.searchDocs.get(doc.docId)
      if (old) await removeDoc(log, old)
      const row: SearchDocRow = {
        docId: doc.docId, projectId: doc.projectId, kind: doc.kind, createdAt: doc.createdAt, len: tokens.length,
        terms: [...tf.keys()].map((token) => termKey(doc.projectId, token)), tfs: [...tf.values()],
      }
      if (doc.sessionId !== undefined) row.sessionId = doc.sessionId
      const stats = await statsOf(log, doc.projectId)
      stats.docs += 1
      stats.length += row.len
      const writes: Promise<unknown>[] = [t.searchDocs.put(row), t.corpusStats.put({ ...stats })]
      if (embedder && EMBEDDED_KINDS.has(doc.kind) && doc.text.trim().length > 0) {
        // A re-put of the same document dropped its old queue row in removeDoc above.
        writes.push(t.embedQueue.add({ docId: doc.docId, projectId: doc.projectId, text: doc.text, attempts: 0, notBefore: 0 }))
        log.embed = true
      }
      await Promise.all(writes)
      log.deltas.push({ op: 'put', projectId: doc.projectId, rows: postingsOf(row) })
    },

    async remove(w, docId) {
      if (!enabled) return
      const doc = await t.searchDocs.get(docId)
      if (doc) await removeDoc(logOf(w), doc)
    },

    async removeProject(w, projectId) {
      if (!enabled) return
      const log = logOf(w)
      log.stats.delete(projectId)
      await Promise.all([
        t.searchDocs.where('projectId').equals(projectId).delete(),
        t.corpusStats.delete(projectId),
        t.vectors.where('projectId').equals(projectId).delete(),
        t.embedQueue.where('projectId').equals(projectId).delete(),
      ])
      log.deltas.push({ op: 'removeProject', projectId })
    },
  }
  engines.set(engine, engine)
  return engine
}

/** Reads the postings of one term: one range of the multi-entry `terms` index. */
export function readPostings(engine: SearchEngine, term: string): Promise<SearchDocRow[]> {
  return engine.t.searchDocs.where('terms').equals(term).toArray()
}
