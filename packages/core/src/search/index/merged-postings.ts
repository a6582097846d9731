import type { StoredDocRow } from './doc-batches.js'
import { Dexie } from 'dexie'
import { maxKey } from '../../store/keys.js'
import type { SegmentRef, TextSegDocsRow } from './index-rows.js'
import { inTermOrder } from './merger.js'
import { decodeBlocks, type PostingList } from './posting-codec.js'
import { docIn, readDir } from './segment-dirs.js'
import { mergeLists, segmentLists } from './segment-read.js'
import type { SearchEngine } from '../types.js'

/**
 * The merged postings of a term in a project, in document order: its posting
 * blocks (written by background merges) and its parts in the project's
 * segments (written by bulk writes), read together. Once the project's
 * directories are loaded ({@link loadDirectories}), only the blocks of a term
 * that has some and the segment rows that hold it are read.
 */
export async function readMergedList(engine: SearchEngine, q: number, w: string): Promise<PostingList> {
  const { state } = engine
  const blockTerms = state.blockTerms.get(q)
  const [blocks, parts] = await Promise.all([
    !blockTerms || blockTerms.has(w) ? engine.t.textBlocks.where('[q+w+b]').between([q, w, Dexie.minKey], [q, w, maxKey()]).toArray() : [],
    segmentLists(
      () => engine.t.textSegs,
      q,
      segmentsOf(engine, q),
      w,
      (g) => state.dirs.get(`${q}:${g}`),
    ),
  ])
  const list = decodeBlocks(inTermOrder(blocks))
  return parts.length === 0 ? list : (mergeLists([list, ...parts]) ?? list)
}

/**
 * Loads what a project's queries look terms up in, when not loaded yet: the
 * directories of its segments and the set of its terms that have posting
 * blocks. Inside the caller's read transaction; what was read while a merge
 * committed is dropped (the caller's query retries on the changed blocks).
 * Then starts loading the segments' document lists in the background.
 */
export async function loadDirectories(engine: SearchEngine, q: number): Promise<void> {
  const { state } = engine
  const missing = segmentsOf(engine, q).filter((ref) => !state.dirs.has(`${q}:${ref.g}`))
  const needBlocks = !state.blockTerms.has(q)
  if (missing.length > 0 || needBlocks) {
    const blockEpoch = state.blockEpoch
    const [rows, keys] = await Promise.all([
      missing.length > 0 ? engine.t.textDirs.bulkGet(missing.map((ref) => [q, ref.g] as [number, number])) : [],
      needBlocks ? engine.t.textBlocks.where('[q+w+b]').between([q, Dexie.minKey, Dexie.minKey], [q, maxKey(), maxKey()]).primaryKeys() : undefined,
    ])
    if (state.blockEpoch !== blockEpoch) return
    missing.forEach((ref, i) => {
      const row = rows[i]
      state.dirs.set(`${q}:${ref.g}`, row ? readDir(row) : null)
    })
    if (keys) state.blockTerms.set(q, new Set(keys.map((key) => key[1])))
  }
  loadSegmentDocs(engine, q)
}

/**
 * Loads the document lists of a project's segments, and counts its document rows to check that
 * they may stand in for those rows (see IndexState.verified), in a transaction of its own once
 * the caller's has completed: counting a large project's rows keeps IndexedDB busy for a while
 * (a few hundred milliseconds at 100,000), and the query that asked should not wait on it.
 * Queries read rows until the lists are in.
 */
function loadSegmentDocs(engine: SearchEngine, q: number): void {
  const { state } = engine
  const refs = segmentsOf(engine, q)
  const missing = refs.filter((ref) => !state.segDocs.has(`${q}:${ref.g}`))
  const needCount = refs.length > 0 && !state.verified.has(q)
  if ((missing.length === 0 && !needCount) || state.docsLoading.has(q)) return
  state.docsLoading.add(q)
  const done = () => state.docsLoading.delete(q)
  const run = () => {
    const { blockEpoch, epoch } = state
    const t = engine.t
    let loading: Promise<[(TextSegDocsRow | undefined)[], number | undefined]>
    try {
      loading = Dexie.ignoreTransaction(() =>
        engine.db.transaction('r', ['textSegDocs', 'textDocs'], () =>
          Promise.all([
            missing.length > 0 ? t.textSegDocs.bulkGet(missing.map((ref) => [q, ref.g] as [number, number])) : [],
            needCount ? countDocRows(t.textDocs, q) : undefined,
          ]),
        ),
      )
    } catch (error) {
      // Refused at once (a search from memory, cache/memory-only.ts, reads nothing): not left marked as loading.
      done()
      throw error
    }
    loading
      .then(([rows, count]) => {
        if (count !== undefined && state.epoch === epoch) state.verified.set(q, count === state.expectedRows(q))
        if (state.blockEpoch !== blockEpoch) return
        missing.forEach((ref, i) => {
          state.segDocs.set(`${q}:${ref.g}`, rows[i] ?? null)
        })
      })
      // A list that failed to load is tried again by a later query; until then rows are read.
      .catch(() => undefined)
      .finally(done)
  }
  const caller = Dexie.currentTransaction
  if (!caller) return run()
  caller.on('complete', run)
  caller.on('abort', done)
}

/** The id and time of merged document `n` of project `q` from its segment's document list, when loaded and the project's rows are verified. */
export function segmentDoc(engine: SearchEngine, q: number, n: number): { d: string; a: number } | undefined {
  const { state } = engine
  if (state.verified.get(q) !== true) return undefined
  // Segments cover disjoint, increasing ranges, each numbered by its lowest document: the last one not above `n`.
  let g: number | undefined
  for (const ref of segmentsOf(engine, q)) {
    if (ref.g > n) break
    g = ref.g
  }
  const docs = g === undefined ? undefined : state.segDocs.get(`${q}:${g}`)
  return docs ? docIn(docs, n) : undefined
}

/** The segments of project `q`, as the last committed merge left them. */
export function segmentsOf(engine: SearchEngine, q: number): readonly SegmentRef[] {
  for (const row of engine.state.projects.values()) if (row.q === q) return row.s ?? []
  return []
}

/**
 * How many single rows project `q`'s stored rows stand for that still count (live
 * documents, and dead ones until purged): single rows, plus each batch's count.
 */
export function countDocRows(table: Dexie.Table<StoredDocRow, number>, q: number): Promise<number> {
  return Dexie.Promise.all([table.where('q').equals(q).count(), table.where('[q+c]').between([q, 0], [q, Number.POSITIVE_INFINITY]).keys()]).then(
    ([rows, keys]) => {
      let members = 0
      for (const key of keys as unknown as Array<[number, number]>) members += key[1]
      return rows - keys.length + members
    },
  )
}
