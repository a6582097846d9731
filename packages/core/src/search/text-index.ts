import { Dexie, type Transaction } from 'dexie'
import type { EngramDb } from '../schema.js'
import type { Embedder, IndexedDoc, TextIndex } from '../store-context.js'
import type { WriteScope } from '../write.js'
import { englishAnalyzer, type Analyzer } from './analyzer.js'
import { termKey, type CorpusStatsRow, type EmbedQueueRow, type PostingRow, type SearchDocRow, type VectorRow } from './index-rows.js'
import { PostingCache, type IndexDelta } from './posting-cache.js'
import { VectorCache } from './vector-cache.js'

/** The search-index tables, typed (schema.ts declares them untyped). */
export interface IndexTables {
  postings: Dexie.Table<PostingRow, [string, string]>
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
export const INDEX_TABLES = ['postings', 'searchDocs', 'corpusStats', 'vectors', 'embedQueue'] as const

const engines = new WeakMap<TextIndex, SearchEngine>()

/** The search engine behind a store's text index, when it has one. */
export function searchEngineOf(index: TextIndex): SearchEngine | undefined {
  return engines.get(index)
}

interface TxLog { deltas: IndexDelta[]; embed: boolean }

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
      const created: TxLog = { deltas: [], embed: false }
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

  async function removeDoc(log: TxLog, doc: SearchDocRow, stats: CorpusStatsRow): Promise<void> {
    const terms = doc.tokens.map((token) => termKey(doc.projectId, token))
    await Promise.all([
      t.postings.bulkDelete(terms.map((term) => [term, doc.docId] as [string, string])),
      t.searchDocs.delete(doc.docId),
      t.vectors.delete(doc.docId),
      t.embedQueue.where('docId').equals(doc.docId).delete(),
    ])
    stats.docs -= 1
    stats.length -= doc.len
    log.deltas.push({ op: 'remove', projectId: doc.projectId, docId: doc.docId, terms })
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
      const [old, current] = await Promise.all([t.searchDocs.get(doc.docId), t.corpusStats.get(doc.projectId)])
      const stats = current ?? { projectId: doc.projectId, docs: 0, length: 0 }
      if (old) {
        const oldStats = old.projectId === doc.projectId ? stats : ((await t.corpusStats.get(old.projectId)) ?? { projectId: old.projectId, docs: 1, length: old.len })
        await removeDoc(log, old, oldStats)
        if (oldStats !== stats) await t.corpusStats.put(oldStats)
      }
      const len = tokens.length
      const rows: PostingRow[] = []
      for (const [token, count] of tf) {
        const row: PostingRow = { term: termKey(doc.projectId, token), docId: doc.docId, tf: count, len, kind: doc.kind, at: doc.createdAt }
        if (doc.sessionId !== undefined) row.sid = doc.sessionId
        rows.push(row)
      }
      const docRow: SearchDocRow = { docId: doc.docId, projectId: doc.projectId, kind: doc.kind, createdAt: doc.createdAt, len, tokens: [...tf.keys()] }
      if (doc.sessionId !== undefined) docRow.sessionId = doc.sessionId
      stats.docs += 1
      stats.length += len
      const writes: Promise<unknown>[] = [t.postings.bulkPut(rows), t.searchDocs.put(docRow), t.corpusStats.put(stats)]
      if (embedder && EMBEDDED_KINDS.has(doc.kind) && doc.text.trim().length > 0) {
        // A re-put of the same document replaced its queue row in removeDoc above.
        writes.push(t.embedQueue.add({ docId: doc.docId, projectId: doc.projectId, text: doc.text, attempts: 0, notBefore: 0 }))
        log.embed = true
      }
      await Promise.all(writes)
      log.deltas.push({ op: 'put', projectId: doc.projectId, rows })
    },

    async remove(w, docId) {
      if (!enabled) return
      const doc = await t.searchDocs.get(docId)
      if (!doc) return
      const log = logOf(w)
      const stats = (await t.corpusStats.get(doc.projectId)) ?? { projectId: doc.projectId, docs: 1, length: doc.len }
      await removeDoc(log, doc, stats)
      await t.corpusStats.put(stats)
    },

    async removeProject(w, projectId) {
      if (!enabled) return
      const log = logOf(w)
      const prefix = termKey(projectId, '')
      await Promise.all([
        t.postings.where('[term+docId]').between([prefix, Dexie.minKey], [`${prefix}\uffff`, Dexie.maxKey]).delete(),
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
