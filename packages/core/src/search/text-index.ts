import { Dexie, type Transaction } from 'dexie'
import type { EngramDb } from '../schema.js'
import type { Embedder, IndexedDoc, PutManyOptions, TextIndex } from '../store-context.js'
import type { WriteScope } from '../write.js'
import { englishAnalyzer, type Analyzer } from './analyzer.js'
import {
  entryKey,
  termKey,
  termOfEntry,
  type CorpusStatsRow,
  type DocKey,
  type EmbedQueueRow,
  type PostingRow,
  type SearchDocRow,
  type VectorRow,
} from './index-rows.js'
import { PostingCache, type IndexDelta } from './posting-cache.js'
import { VectorCache } from './vector-cache.js'

/** The search-index tables, typed (schema.ts declares them untyped). */
export interface IndexTables {
  searchDocs: Dexie.Table<SearchDocRow, DocKey>
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
  /** Internal (tests): document frequency above which a term's postings are read best first instead of whole (default 2000). */
  sortedAccessMinDf?: number
  /** Internal (tests): read long lists best first also for terms already queried since open. */
  sortedAccessWarm?: boolean
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
  /** Document frequency above which a query reads a term's postings best first (sorted access) instead of whole. */
  readonly sortedAccessMinDf: number
  /** Whether terms already queried since open also get sorted access (tests; normally they are read whole and cached). */
  readonly sortedAccessWarm: boolean
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

/** What one transaction did to the index: corpus deltas flushed before commit, changes replayed on the caches after. */
interface TxLog {
  deltas: IndexDelta[]
  embed: boolean
  stats: Map<string, { docs: number; length: number }> /** Corpus rows read as soon as a project shows up, so the commit-time flush does not wait on a read. */
  stored: Map<string, Promise<CorpusStatsRow | undefined>>
}

/** A settled Dexie promise: awaiting it keeps Dexie's transaction zone (a native one may not, after ~100 in a row). */
const done = (): Promise<void> => Dexie.Promise.resolve() as unknown as Promise<void>

/**
 * Creates the incremental BM25 index kept in IndexedDB. `put`, `putMany` and
 * `remove` run inside the caller's write transaction, so postings commit and
 * roll back with the record they index; corpus statistics are written once per
 * transaction, just before it commits; opening a store reads nothing up front.
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
      const created: TxLog = { deltas: [], embed: false, stats: new Map(), stored: new Map() }
      log = created
      logs.set(w.tx, created)
      w.onBeforeCommit(() => flushStats(created))
      w.tx.on('complete', () => {
        cache.apply(created.deltas)
        vectors.apply(created.deltas)
        if (created.embed) engine.onEnqueue()
      })
    }
    return log
  }

  function countDoc(log: TxLog, projectId: string, docs: number, length: number): void {
    const s = log.stats.get(projectId)
    if (s) {
      s.docs += docs
      s.length += length
      return
    }
    log.stats.set(projectId, { docs, length })
    if (!log.stored.has(projectId)) {
      const row = t.corpusStats.get(projectId)
      row.catch(() => undefined) // a failed read fails the transaction; flushStats sees it
      log.stored.set(projectId, row)
    }
  }

  /** Adds the transaction's document count and length deltas to the stored corpus rows (two requests). */
  async function flushStats(log: TxLog): Promise<void> {
    if (log.stats.size === 0) return
    const ids = [...log.stats.keys()]
    const rows = await Promise.all(ids.map((id) => log.stored.get(id) ?? t.corpusStats.get(id)))
    await t.corpusStats.bulkPut(
      ids.map((projectId, i) => {
        const d = log.stats.get(projectId)!
        const row = rows[i]
        return { projectId, docs: Math.max(0, (row?.docs ?? 0) + d.docs), length: Math.max(0, (row?.length ?? 0) + d.length) }
      }),
    )
    log.stats.clear()
    log.stored.clear()
  }

  /** Removes stored documents: their rows (and so their postings), vectors and queued embeddings. */
  async function removeDocs(log: TxLog, docs: readonly SearchDocRow[]): Promise<void> {
    if (docs.length === 0) return
    for (const doc of docs) {
      countDoc(log, doc.projectId, -1, -doc.len)
      log.deltas.push({ op: 'remove', projectId: doc.projectId, docId: doc.docId, len: doc.len, terms: doc.terms.map(termOfEntry) })
    }
    const ids = docs.map((doc) => doc.docId)
    // Vectors and queue rows may exist from a session opened with an embedder: always clear them.
    await Promise.all([t.searchDocs.bulkDelete(docs.map(keyOf)), t.vectors.bulkDelete(ids), t.embedQueue.where('docId').anyOf(ids).delete()])
  }

  async function putDocs(w: WriteScope, input: readonly IndexedDoc[], fresh: boolean): Promise<void> {
    const log = logOf(w)
    const byId = new Map<string, IndexedDoc>()
    for (const doc of input) byId.set(doc.docId, doc) // the last copy of a document wins
    const docs = [...byId.values()]
    if (!fresh) {
      const old = await Promise.all(docs.map((d) => docRow(t, d.docId)))
      await removeDocs(
        log,
        old.filter((row): row is SearchDocRow => row !== undefined),
      )
    }
    const docRows: SearchDocRow[] = []
    const queued: EmbedQueueRow[] = []
    for (const doc of docs) {
      const tokens = analyzer.terms(doc.text)
      const counts = new Map<string, number>()
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1)
      const len = tokens.length
      const row: SearchDocRow = { docId: doc.docId, len, at: doc.createdAt, sid: doc.sessionId ?? '', projectId: doc.projectId, terms: [], tfs: [] }
      const rows: PostingRow[] = []
      for (const [token, tf] of counts) {
        const term = termKey(doc.projectId, token)
        row.terms.push(entryKey(term, tf, len))
        row.tfs.push(tf)
        const p: PostingRow = { term, docId: doc.docId, tf, len, at: doc.createdAt }
        if (doc.sessionId !== undefined) p.sid = doc.sessionId
        rows.push(p)
      }
      docRows.push(row)
      countDoc(log, doc.projectId, 1, len)
      log.deltas.push({ op: 'put', projectId: doc.projectId, len, rows })
      if (embedder && EMBEDDED_KINDS.has(doc.kind) && doc.text.trim().length > 0) {
        queued.push({ docId: doc.docId, projectId: doc.projectId, text: doc.text, attempts: 0, notBefore: 0 })
      }
    }
    const writes: Promise<unknown>[] = [t.searchDocs.bulkPut(docRows)]
    if (queued.length > 0) {
      writes.push(t.embedQueue.bulkAdd(queued))
      log.embed = true
    }
    await Promise.all(writes)
  }

  const engine: SearchEngine = {
    db,
    t,
    analyzer,
    cache,
    vectors,
    embedder,
    enabled,
    sortedAccessMinDf: opts.sortedAccessMinDf ?? 2000,
    sortedAccessWarm: opts.sortedAccessWarm === true,
    tables: enabled ? INDEX_TABLES : [],
    onEnqueue: () => {},

    put(w, doc) {
      return enabled ? putDocs(w, [doc], false) : done()
    },

    putMany(w, docs, options?: PutManyOptions) {
      return enabled && docs.length > 0 ? putDocs(w, docs, options?.fresh === true) : done()
    },

    remove(w, docId) {
      if (!enabled) return done()
      return (async () => {
        const doc = await docRow(t, docId)
        if (doc) await removeDocs(logOf(w), [doc])
      })()
    },

    removeProject(w, projectId) {
      if (!enabled) return done()
      return (async () => {
        const log = logOf(w)
        log.stats.delete(projectId)
        log.stored.delete(projectId)
        await Promise.all([
          t.searchDocs.where('projectId').equals(projectId).delete(),
          t.corpusStats.delete(projectId),
          t.vectors.where('projectId').equals(projectId).delete(),
          t.embedQueue.where('projectId').equals(projectId).delete(),
        ])
        log.deltas.push({ op: 'removeProject', projectId })
      })()
    },

    reset(w) {
      if (!enabled) return done()
      return (async () => {
        const log = logOf(w)
        log.stats.clear()
        log.stored.clear()
        await Promise.all(INDEX_TABLES.map((table) => db.table(table).clear()))
        log.deltas.push({ op: 'reset' })
      })()
    },
  }
  engines.set(engine, engine)
  return engine
}

/** The primary key of a document row. */
export function keyOf(row: SearchDocRow): DocKey {
  return [row.docId, row.len, row.at, row.sid]
}

/** The stored row of a document id, if any (one primary-key range read). */
export function docRow(t: IndexTables, docId: string): Promise<SearchDocRow | undefined> {
  return t.searchDocs.where('[docId+len+at+sid]').between([docId], [docId, []]).first()
}
