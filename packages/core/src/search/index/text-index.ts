import { Dexie, type Transaction } from 'dexie'
import { loadOnUse } from '../../store/load-on-use.js'
import { reportError } from '../../store/report-error.js'
import type { EngramDb } from '../../catalog/schema.js'
import type { MetaRow } from '../../store/rows.js'
import type { Embedder, IndexedDoc, PutManyOptions, TextIndex } from '../../store/store-context.js'
import type { WriteScope } from '../../store/write.js'
import { englishAnalyzer, type Analyzer } from '../analysis/analyzer.js'
import {
  kindCodeOf,
  MERGED_MARK_KEY,
  TERM_SEPARATOR,
  type EmbedQueueRow,
  type TextBlockRow,
  type TextBatchRow,
  type TextCorpusRow,
  type TextDocRow,
  type VectorRow,
} from './index-rows.js'
import { IndexState, tailDocOf, type DeadDoc, type IndexChanges } from './index-state.js'
import { batchOf, docsById, expandRows, rewriteBatches, withoutMembers, type StoredDocRow } from './doc-batches.js'
import type { DirTable, SegDocsTable } from './segment-dirs.js'
import type { SegmentTable } from './segments.js'
import { VectorCache } from '../vectors/vector-cache.js'
import type { SearchEngine } from '../types.js'

/** The search-index tables, typed (schema.ts declares them untyped). */
export interface IndexTables {
  textDocs: Dexie.Table<StoredDocRow, number>
  textBlocks: Dexie.Table<TextBlockRow, [number, string, number]>
  textCorpus: Dexie.Table<TextCorpusRow, string>
  textSegs: SegmentTable
  textDirs: DirTable
  textSegDocs: SegDocsTable
  vectors: Dexie.Table<VectorRow, string>
  embedQueue: Dexie.Table<EmbedQueueRow, number>
  meta: Dexie.Table<MetaRow, string>
}

/** Options of {@link createTextIndex}, as given to openMemory. */
export interface TextIndexOptions {
  embedder?: Embedder
  analyzer?: Analyzer
  /** Internal (benchmarks): `'float32'` stores vectors as they come instead of as int8 (default), to measure what int8 costs. */
  vectorPrecision?: 'int8' | 'float32'
  /** Internal (benchmarks only): `false` gives a store without a full-text index. */
  textIndex?: boolean
  /** Internal (tests, benchmarks): unmerged documents that start a merge at once, writes or not (default 8,192). */
  mergeAt?: number
  /** Internal (tests, benchmarks): documents in one batch that are merged as a segment in their own transaction (default 2,000; `Infinity`: never). */
  inlineMergeAt?: number
  /** Internal (tests, benchmarks): unmerged documents a background merge writes as a segment rather than into blocks (default 256). */
  segmentAt?: number
  /** Internal (tests, benchmarks): quiet time after the last write before the tail is merged (ms, default 250; `Infinity`: only on `mergeAt`). */
  mergeDelayMs?: number
  /** Internal (tests): dead documents in a project that make a merge purge its blocks (default 64). */
  purgeAt?: number
  /** Internal (tests, benchmarks): called after each merge commits, with the documents it merged and purged. */
  onMerge?: (merged: { merged: number; purged: number }) => void
  /** Internal (tests): called when a warm of a project's messages into the query cache has ended (search.ts). */
  onWarm?: (projectId: string) => void
}

export type { SearchEngine } from '../types.js'

/** Kinds that get embeddings when an embedder is set. */
const EMBEDDED_KINDS = new Set(['message', 'passage'])
/** Every table the index writes; callers add them to their write transactions. */
export const INDEX_TABLES = ['textDocs', 'textBlocks', 'textCorpus', 'textSegs', 'textDirs', 'textSegDocs', 'vectors', 'embedQueue', 'meta'] as const
/**
 * Documents in one batch that are merged in the writing transaction, as a posting segment
 * (imports, large `appendMany`), rather than later: the batch is not read back, and a
 * segment is a few rows where blocks take a row per term.
 */
const INLINE_MERGE_AT = 2000
/**
 * Unmerged documents that a background merge writes as a posting segment rather than into
 * blocks (a segment is a few rows; appending to blocks rewrites a row per term touched).
 */
const SEGMENT_AT = 256
/**
 * Unmerged documents that start a merge while writes go on. Below it merges wait for a quiet
 * moment: a merge rewrites the open block of every term it touches, so one merge of many
 * documents costs far less than many of few, and a burst of writes is not slowed by merges.
 */
const MERGE_AT = 8192
/** Documents folded per merge transaction, so a background merge never holds the store long. */
const MERGE_BATCH = 4000

const engines = new WeakMap<TextIndex, SearchEngine>()

/** The search engine behind a store's text index, when it has one. */
export function searchEngineOf(index: TextIndex): SearchEngine | undefined {
  return engines.get(index)
}

/** What one transaction did to the index. */
interface TxLog {
  changes: IndexChanges
  embed: boolean
  assigning: Promise<unknown>
  qs: Map<string, Promise<number>>
  onComplete: Array<() => void>
  /** Settles once the latest batch of the transaction has its rows issued: documents added meanwhile wait for it. */
  numbering?: Promise<unknown>
  /** This transaction's latest copy of each batch row it rewrote (undefined: deleted). */
  batches: Map<number, TextBatchRow | undefined>
  /** Adds of project rows assigned in this transaction, awaited with the documents' own writes. */
  adds: Promise<unknown>[]
}

/** Documents of one write stored in batch rows rather than one row each (doc-batches.ts). */
const BATCH_AT = 4

/** A settled Dexie promise: awaiting it keeps Dexie's transaction zone (a native one may not, after ~100 in a row). */
const done = (): Promise<void> => Dexie.Promise.resolve() as unknown as Promise<void>

/** Ignores a settled promise's value or failure. */
const noop = (): void => {}

/** The documents to write: the last copy of each. */
function lastCopies(input: readonly IndexedDoc[]): readonly IndexedDoc[] {
  const byId = new Map<string, IndexedDoc>()
  for (const doc of input) byId.set(doc.docId, doc)
  return byId.size === input.length ? input : [...byId.values()]
}

/** Analyzes a document into its stored row (without its number). */
export function docRowOf(analyzer: Analyzer, doc: IndexedDoc, q: number): TextDocRow {
  const tokens = analyzer.terms(doc.text)
  const counts = new Map<string, number>()
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1)
  const terms = [...counts.keys()]
  const row: TextDocRow = { q, d: doc.docId, a: doc.createdAt, l: tokens.length, t: terms.join(TERM_SEPARATOR), k: kindCodeOf(doc.docId) }
  if (terms.some((w) => counts.get(w)! > 1)) row.f = Uint16Array.from(terms, (w) => Math.min(0xffff, counts.get(w)!))
  return row
}

/** The stored row of a document merged as it is written: its terms live in the posting blocks only. */
export function mergedRowOf(row: TextDocRow): TextDocRow {
  const { f: _frequencies, ...rest } = row
  return { ...rest, t: '' }
}

/**
 * Creates the full-text index kept in IndexedDB. `put`, `putMany` and
 * `remove` run inside the caller's write transaction, so a document commits
 * and rolls back with the record it indexes: writing one is one small row
 * (no read), replacing or removing one also marks the old row dead. An idle
 * merger folds written rows into per-term posting blocks; queries read a few
 * blocks plus the unmerged tail, which they keep in memory.
 *
 * @example const index = createTextIndex(db, { analyzer: createAnalyzer({ stem: (w) => w }) })
 */
export function createTextIndex(db: EngramDb, options: Readonly<Record<string, unknown>> | TextIndexOptions = {}): SearchEngine {
  const opts = options as TextIndexOptions
  const t = db as unknown as IndexTables
  const enabled = opts.textIndex !== false
  const analyzer = opts.analyzer ?? englishAnalyzer
  const embedder = opts.embedder
  const mergeAt = opts.mergeAt ?? MERGE_AT
  const mergeDelayMs = opts.mergeDelayMs ?? 250
  const state = new IndexState()
  const vectors = new VectorCache()
  const logs = new WeakMap<Transaction, TxLog>()
  let unmergedSinceOpen = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let merging: Promise<void> | undefined
  let stopped = false
  /** Whether vector or embed-queue rows may exist (always with an embedder; else learned from the first write). */
  let vectorsMayExist: boolean | undefined = embedder ? true : undefined
  // The merger loads in the background as the store opens, so a merge never waits on fetching code;
  // a failed load is tried again (and reported) by the merge that needs it.
  let merger: typeof import('./merger.js') | undefined
  const loadMerger = loadOnUse('index merger', async () => (merger = await import('./merger.js')))
  const loadClearing = loadOnUse('index clearing', () => import('./index-clear.js'))
  if (enabled) loadMerger().catch(noop)

  function logOf(w: WriteScope): TxLog {
    let log = logs.get(w.tx)
    if (!log) {
      const created: TxLog = {
        changes: { added: [], killed: [], assigned: [], removedProjects: [], vectorProjects: new Set(), reset: false },
        embed: false,
        assigning: Dexie.Promise.resolve() as unknown as Promise<unknown>,
        qs: new Map(),
        onComplete: [],
        batches: new Map(),
        adds: [],
      }
      log = created
      logs.set(w.tx, created)
      w.tx.on('complete', () => {
        for (const fn of created.onComplete) fn()
        state.apply(created.changes)
        vectors.apply(created.changes)
        if (created.embed) engine.onEnqueue()
        unmergedSinceOpen += created.changes.added.length + created.changes.killed.length
        if (created.changes.merged) unmergedSinceOpen = 0
        if (created.changes.added.length > 0 || created.changes.killed.length > 0) scheduleMerge()
      })
    }
    return log
  }

  /** The project's number, assigning the next free one (in this transaction) the first time a project is indexed. */
  function projectNumber(log: TxLog, projectId: string): number | Promise<number> {
    const known = state.projects.get(projectId)
    if (known) return known.q
    let pending = log.qs.get(projectId)
    if (!pending) {
      // Assignments of one transaction run one after the other, so two new projects never take the same number;
      // the first one's reads go out at once (before the caller's own writes). The number is known when they
      // return; the new row's add is awaited with the documents' writes (`log.adds`). A chain of Dexie promises
      // (no native async function), so a single put may run beside other requests.
      const read = () => Dexie.Promise.all([t.textCorpus.get(projectId), t.textCorpus.orderBy('q').last()])
      const next = (log.qs.size === 0 ? read() : log.assigning.then(read)).then(([row, last]) => {
        if (row) {
          log.changes.assigned.push(row)
          return row.q
        }
        const created: TextCorpusRow = { p: projectId, q: (last?.q ?? 0) + 1, docs: 0, length: 0 }
        log.adds.push(t.textCorpus.add(created))
        log.changes.assigned.push(created)
        return created.q
      })
      log.assigning = next.catch(() => undefined)
      pending = next
      log.qs.set(projectId, pending)
    }
    return pending
  }

  /**
   * Removes stored rows: a pure delete, so it works on a full disk too. A document that was
   * merged leaves its postings in blocks; queries skip it from now on, and the next merge
   * records it (a marker of a few bytes) until enough dead ones make it purge their project.
   */
  function kill(log: TxLog, rows: readonly TextDocRow[], markRow: PromiseLike<MetaRow | undefined>): Promise<void> {
    if (rows.length === 0) return done()
    const singles = rows.filter((r) => batchOf(r) === undefined).map((r) => r.n!)
    return Dexie.Promise.all([markRow, singles.length > 0 ? t.textDocs.bulkDelete(singles) : undefined]).then(([row]) => {
      const mark = typeof row?.value === 'number' ? row.value : 0
      // A member of a batch is taken out of its row, which keeps a merged one as a dead document (recorded at once).
      const batched = rows.filter((r) => batchOf(r) !== undefined)
      const rewritten = batched.length > 0 ? rewriteBatches(t.textDocs, batched, log.batches, (batch, ns) => withoutMembers(batch, ns, mark)) : undefined
      // A document added by this transaction never reached the tail in memory: it just goes (a fact set
      // twice in one transaction); reported as added and killed, it would stay in the tail after commit.
      const addedHere = log.changes.added.length > 0 ? new Set(log.changes.added.map((d) => d.n)) : undefined
      const gone = new Set<number>()
      for (const r of rows) {
        if (addedHere?.has(r.n!)) gone.add(r.n!)
        // Only a merged document has postings in blocks to skip and, later, purge.
        else {
          const dead: DeadDoc = { n: r.n!, q: r.q, l: r.l, merged: r.n! <= mark }
          if (dead.merged && batchOf(r) !== undefined) dead.recorded = true
          log.changes.killed.push(dead)
        }
      }
      if (gone.size > 0) log.changes.added = log.changes.added.filter((d) => !gone.has(d.n))
      return rewritten
    }) as Promise<void>
  }

  /**
   * Deletes the vectors and queued embeddings of documents (they may exist from a session opened with an embedder).
   * Chained through Dexie promises, as {@link putOne}, so it can run beside other requests of the transaction.
   */
  function dropVectors(log: TxLog, ids: readonly string[], projects: Iterable<string>, checkFirst: boolean): Promise<void> {
    // A store that never had an embedder has nothing to drop: learn that once, not on every write.
    if (vectorsMayExist === false) return done()
    const drop = (): Promise<void> => {
      for (const p of projects) log.changes.vectorProjects.add(p)
      return Dexie.Promise.all([
        t.vectors.bulkDelete([...ids]),
        t.embedQueue
          .where('docId')
          .anyOf([...ids])
          .delete(),
      ]).then(() => undefined)
    }
    if (!checkFirst && vectorsMayExist !== undefined) return drop()
    return Dexie.Promise.all([t.vectors.count(), t.embedQueue.count()]).then(([v, e]) => {
      if (v === 0 && e === 0) {
        if (!embedder) log.onComplete.push(() => (vectorsMayExist ??= false))
        return undefined
      }
      vectorsMayExist = true
      return drop()
    })
  }

  /**
   * Indexes one document. Every request is issued at once (a fresh document: one `add`, no read)
   * and the result is a chain of Dexie promises with no native async function in it, so a caller
   * may issue it beside its own writes and await them together: a native async function left
   * running beside others unbalances Dexie's count of pending awaits, and a caller nested in an
   * outer transaction then loses that transaction (it commits early).
   */
  function putOne(w: WriteScope, doc: IndexedDoc, fresh: boolean): Promise<void> {
    const log = logOf(w)
    const q = projectNumber(log, doc.projectId)
    if (typeof q !== 'number' || log.numbering) return Dexie.Promise.all([q, log.numbering]).then(([n]) => putNumbered(log, doc, n, fresh))
    return putNumbered(log, doc, q, fresh)
  }

  function putNumbered(log: TxLog, doc: IndexedDoc, q: number, fresh: boolean): Promise<void> {
    const row = docRowOf(analyzer, doc, q)
    // Older copies are looked up before the new row is added (requests run in order).
    const older = fresh ? undefined : byId(doc.docId)
    const mark = fresh ? undefined : t.meta.get(MERGED_MARK_KEY)
    const added = t.textDocs.add(row)
    const dropped = fresh ? undefined : dropVectors(log, [doc.docId], [doc.projectId], false)
    let queued: Promise<unknown> | undefined
    if (embedder && EMBEDDED_KINDS.has(doc.kind) && doc.text.trim().length > 0) {
      const entry: EmbedQueueRow = { docId: doc.docId, projectId: doc.projectId, text: doc.text, attempts: 0, notBefore: 0, at: doc.createdAt }
      if (doc.sessionId !== undefined) entry.sid = doc.sessionId
      queued = t.embedQueue.add(entry)
      log.embed = true
    }
    return Dexie.Promise.all([added, older, dropped, queued, Dexie.Promise.all(log.adds)]).then(([key, old]) => {
      row.n = key
      log.changes.added.push(tailDocOf(row))
      return old && old.length > 0
        ? kill(
            log,
            old.filter((r) => r.n !== key),
            mark!,
          )
        : undefined
    })
  }

  /**
   * Indexes a batch of documents with a few batched requests. Like {@link putOne}, a chain of Dexie
   * promises, so a caller may issue it beside its own writes. A few documents are analyzed and
   * written at once; a larger batch first asks for its numbers (one read, so a caller should
   * call this before issuing its own writes) and is analyzed while IndexedDB works through
   * the caller's writes. A batch merged inline follows once its rows are written.
   */
  function putDocs(w: WriteScope, input: readonly IndexedDoc[], fresh: boolean): Promise<void> {
    const log = logOf(w)
    if (input.length >= BATCH_AT && merger !== undefined) {
      // A batch's numbers follow every stored document: read now, beside the numbers of its projects,
      // before the caller's writes; the documents are gone through once they are back (while IndexedDB
      // writes the caller's rows). Until its rows are issued, no other document of the transaction is added.
      const projects = [...new Set(input.map((doc) => doc.projectId))]
      const numbers = projects.map((p) => projectNumber(log, p))
      const previous = log.numbering
      const first = previous ? previous.then(firstFreeNumber) : firstFreeNumber()
      const issued = Dexie.Promise.all([Dexie.Promise.all(numbers), first]).then(([qs, from]) => {
        const docs = lastCopies(input)
        const q = new Map(projects.map((p, i) => [p, qs[i]!]))
        return {
          written: writeDocs(
            log,
            docs,
            docs.map((doc) => q.get(doc.projectId)!),
            fresh,
            from,
          ),
        }
      })
      log.numbering = issued.then(
        () => undefined,
        () => undefined,
      )
      return issued.then(({ written }) => written)
    }
    const docs = lastCopies(input)
    const numbers = docs.map((doc) => projectNumber(log, doc.projectId))
    if (!log.numbering && numbers.every((n): n is number => typeof n === 'number')) return writeDocs(log, docs, numbers, fresh)
    return Dexie.Promise.all([Dexie.Promise.all(numbers), log.numbering]).then(([qs]) => writeDocs(log, docs, qs, fresh))
  }

  /** The first document number above every stored document and the merged mark. */
  function firstFreeNumber(): Promise<number> {
    return Dexie.Promise.all([t.textDocs.orderBy(':id').lastKey(), t.meta.get(MERGED_MARK_KEY)]).then(([last, markRow]) => {
      const mark = typeof markRow?.value === 'number' ? markRow.value : 0
      return Math.max(typeof last === 'number' ? last : 0, mark) + 1
    })
  }

  function writeDocs(log: TxLog, docs: readonly IndexedDoc[], qs: readonly number[], fresh: boolean, first?: number): Promise<void> {
    const rows = docs.map((doc, i) => docRowOf(analyzer, doc, qs[i]!))
    const ids = docs.map((doc) => doc.docId)
    const writes: Promise<unknown>[] = []
    // Older copies are looked up before the new rows are added (requests run in order), in one round trip.
    const older = fresh ? undefined : ids.length === 1 ? byId(ids[0]!) : olderCopies(ids, new Set(qs))
    const mark = fresh ? undefined : t.meta.get(MERGED_MARK_KEY)
    // A batch merged in this transaction is stored without its terms: its postings go straight into
    // blocks, and nothing reads the terms of a merged document's row again.
    const inline = merger !== undefined && docs.length >= (opts.inlineMergeAt ?? INLINE_MERGE_AT)
    if (first !== undefined)
      rows.forEach((row, i) => {
        row.n = first + i
      })
    const stored = inline ? rows.map(mergedRowOf) : rows
    const added = first !== undefined ? addBatches(stored, first) : t.textDocs.bulkAdd(stored, { allKeys: true })
    // The postings of a numbered batch merged inline are collected now, while IndexedDB writes the caller's rows.
    const collected = inline && first !== undefined ? merger!.collectSegments(rows) : undefined
    if (!fresh) writes.push(dropVectors(log, ids, new Set(docs.map((d) => d.projectId)), ids.length > 16))
    const queued: EmbedQueueRow[] = []
    if (embedder) {
      for (const doc of docs) {
        if (!EMBEDDED_KINDS.has(doc.kind) || doc.text.trim().length === 0) continue
        const row: EmbedQueueRow = { docId: doc.docId, projectId: doc.projectId, text: doc.text, attempts: 0, notBefore: 0, at: doc.createdAt }
        if (doc.sessionId !== undefined) row.sid = doc.sessionId
        queued.push(row)
      }
    }
    if (queued.length > 0) {
      writes.push(t.embedQueue.bulkAdd(queued))
      log.embed = true
    }
    return Dexie.Promise.all([added, older, ...writes, Dexie.Promise.all(log.adds)])
      .then((result) => {
        const [keys, old] = result as [number[], TextDocRow[] | undefined]
        keys.forEach((key, i) => {
          const row = rows[i]!
          row.n = key
          if (!inline) log.changes.added.push(tailDocOf(row))
        })
        if (!old || old.length === 0) return undefined
        const written = new Set(keys)
        return kill(
          log,
          old.filter((row) => !written.has(row.n!)),
          mark!,
        )
      })
      .then(() =>
        inline
          ? merger!.mergeTail(t, Infinity, rows, opts.purgeAt, state.pendingMarkers(), 0, collected).then((merged) => {
              log.changes.merged = merged
            })
          : undefined,
      )
  }

  /** Stored rows of these document ids; none are looked up in projects that hold no document yet (a first import). */
  async function olderCopies(ids: readonly string[], qs: ReadonlySet<number>): Promise<TextDocRow[]> {
    const holding = await Promise.all([...qs].map((q) => t.textDocs.where('q').equals(q).limit(1).primaryKeys()))
    if (holding.every((keys) => keys.length === 0)) return []
    return merger ? merger.docsByIds(t.textDocs, ids) : (await Promise.all(ids.map(byId))).flat()
  }

  /** The stored rows of a document id (members of batches as single rows). */
  function byId(id: string): Promise<TextDocRow[]> {
    return docsById(t.textDocs, id)
  }

  /**
   * Adds rows in batch rows, numbered from `first` on; resolves to their numbers. A batch row's
   * key is its last document's number, so the auto-increment counter passes them all.
   */
  function addBatches(stored: TextDocRow[], first: number): Promise<number[]> {
    return t.textDocs.bulkAdd(merger!.batchRowsOf(stored, first)).then(() => stored.map((_, i) => first + i))
  }

  function scheduleMerge(): void {
    if (stopped || !enabled) return
    if (unmergedSinceOpen >= mergeAt) {
      void merge()
      return
    }
    // Each write restarts the wait: the merge runs once writes have gone quiet.
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (!Number.isFinite(mergeDelayMs)) return
    timer = setTimeout(() => {
      timer = undefined
      void merge()
    }, mergeDelayMs)
    ;(timer as { unref?: () => void }).unref?.()
  }

  /** Merges in batches until the tail is empty; concurrent callers share one run. */
  function merge(): Promise<void> {
    if (!enabled) return Promise.resolve()
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    merging ??= (async () => {
      try {
        const { mergeTail } = merger ?? (await loadMerger())
        for (;;) {
          if (stopped) return
          let more = false
          await db.transaction('rw', ['textDocs', 'textBlocks', 'textCorpus', 'textSegs', 'textDirs', 'textSegDocs', 'meta'], async (tx) => {
            const outcome = await mergeTail(t, MERGE_BATCH, [], opts.purgeAt, state.pendingMarkers(), opts.segmentAt ?? SEGMENT_AT, undefined, true)
            more = outcome.more
            tx.on('complete', () => {
              state.apply({ added: [], killed: [], assigned: [], removedProjects: [], vectorProjects: new Set(), reset: false, merged: outcome })
              unmergedSinceOpen = 0
              engine.onMerged()
              opts.onMerge?.({ merged: outcome.merged.length, purged: outcome.purged.length })
            })
          })
          if (!more) return
        }
      } catch (error) {
        // The tail stays as it is (queries read it); the next write tries again.
        if (!stopped && db.isOpen()) reportError(error)
      } finally {
        merging = undefined
      }
    })()
    return merging
  }

  const engine: SearchEngine = {
    db,
    t,
    analyzer,
    state,
    vectors,
    embedder,
    vectorPrecision: opts.vectorPrecision === 'float32' ? 'float32' : 'int8',
    enabled,
    tables: enabled ? INDEX_TABLES : [],
    onEnqueue: () => {},
    onMerged: () => {},
    onWarm: opts.onWarm,

    ready() {
      if (state.ready) return done()
      return state.load(async () => {
        const run = async () => {
          const [markRow, corpus] = await Promise.all([t.meta.get(MERGED_MARK_KEY), t.textCorpus.toArray()])
          const mark = typeof markRow?.value === 'number' ? markRow.value : 0
          const [tail, dead] = await Promise.all([t.textDocs.where(':id').above(mark).toArray(), t.textDocs.where('x').equals(1).toArray()])
          return { mark, corpus, tail: expandRows(tail), dead: expandRows(dead).filter((row) => row.x === 1) }
        }
        return Dexie.currentTransaction ? run() : db.transaction('r', ['textDocs', 'textCorpus', 'meta'], run)
      }, Dexie.currentTransaction === null)
    },

    merge,

    stop() {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    },

    put(w, doc, options?: PutManyOptions) {
      return enabled ? putOne(w, doc, options?.fresh === true) : done()
    },

    putMany(w, docs, options?: PutManyOptions) {
      return enabled && docs.length > 0 ? putDocs(w, docs, options?.fresh === true) : done()
    },

    remove(w, docId) {
      if (!enabled) return done()
      const log = logOf(w)
      const mark = t.meta.get(MERGED_MARK_KEY)
      return Dexie.Promise.all([byId(docId), dropVectors(log, [docId], [], false)]).then(([rows]) => {
        for (const row of rows) {
          const projectId = projectIdOf(row.q)
          if (projectId !== undefined) log.changes.vectorProjects.add(projectId)
        }
        return kill(log, rows, mark)
      })
    },

    prepareBulk() {
      return loadMerger().then(noop, noop)
    },

    clearing() {
      return loadClearing().then(({ clearingOf }) => clearingOf(t, enabled ? (w) => logOf(w).changes : undefined))
    },
  }

  function projectIdOf(q: number): string | undefined {
    for (const row of state.projects.values()) if (row.q === q) return row.p
    return undefined
  }

  engines.set(engine, engine)
  return engine
}
