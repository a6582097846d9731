import { Dexie } from 'dexie'
import { maxKey } from '../keys.js'
import type { SegmentRef } from './index-rows.js'
import { inTermOrder } from './merger.js'
import { decodeBlocks, type PostingList } from './posting-codec.js'
import { docIn, readDir } from './segment-dirs.js'
import { mergeLists, segmentLists } from './segment-read.js'
import type { SearchEngine } from './text-index.js'

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
    segmentLists(engine.t.textSegs, q, segmentsOf(engine, q), w, (g) => state.dirs.get(`${q}:${g}`)),
  ])
  const list = decodeBlocks(inTermOrder(blocks))
  return parts.length === 0 ? list : (mergeLists([list, ...parts]) ?? list)
}

/**
 * Loads what a project's queries look terms up in, when not loaded yet: the
 * directories of its segments and the set of its terms that have posting
 * blocks. Inside the caller's read transaction; what was read while a merge
 * committed is dropped (the caller's query retries on the changed blocks).
 */
export async function loadDirectories(engine: SearchEngine, q: number): Promise<void> {
  const { state } = engine
  const refs = segmentsOf(engine, q)
  const missing = refs.filter((ref) => !state.dirs.has(`${q}:${ref.g}`))
  const needBlocks = !state.blockTerms.has(q)
  // Whether the directories' documents can stand in for document rows (see IndexState.verified).
  const needCount = refs.length > 0 && !state.verified.has(q)
  if (missing.length === 0 && !needBlocks && !needCount) return
  const { blockEpoch, epoch } = state
  const [rows, keys, count] = await Promise.all([
    missing.length > 0 ? engine.t.textDirs.bulkGet(missing.map((ref) => [q, ref.g] as [number, number])) : [],
    needBlocks ? engine.t.textBlocks.where('[q+w+b]').between([q, Dexie.minKey, Dexie.minKey], [q, maxKey(), maxKey()]).primaryKeys() : undefined,
    needCount ? engine.t.textDocs.where('q').equals(q).count() : undefined,
  ])
  if (count !== undefined && state.epoch === epoch) state.verified.set(q, count === state.expectedRows(q))
  if (state.blockEpoch !== blockEpoch) return
  missing.forEach((ref, i) => {
    const row = rows[i]
    state.dirs.set(`${q}:${ref.g}`, row ? readDir(row) : null)
  })
  if (keys) state.blockTerms.set(q, new Set(keys.map((key) => key[1])))
}

/** The id and time of merged document `n` of project `q` from its segment's directory, when the project's rows are verified. */
export function segmentDoc(engine: SearchEngine, q: number, n: number): { d: string; a: number } | undefined {
  const { state } = engine
  if (state.verified.get(q) !== true) return undefined
  // Segments cover disjoint, increasing ranges, each numbered by its lowest document: the last one not above `n`.
  let g: number | undefined
  for (const ref of segmentsOf(engine, q)) {
    if (ref.g > n) break
    g = ref.g
  }
  const dir = g === undefined ? undefined : state.dirs.get(`${q}:${g}`)
  return dir ? docIn(dir, n) : undefined
}

/** The segments of project `q`, as the last committed merge left them. */
export function segmentsOf(engine: SearchEngine, q: number): readonly SegmentRef[] {
  for (const row of engine.state.projects.values()) if (row.q === q) return row.s ?? []
  return []
}
