import { Dexie } from 'dexie'
import { maxKey } from '../keys.js'
import { inTermOrder } from './merger.js'
import { decodeBlocks, type PostingList } from './posting-codec.js'
import { mergeLists, segmentLists } from './segment-read.js'
import type { SearchEngine } from './text-index.js'

/**
 * The merged postings of a term in a project, in document order: its posting
 * blocks (written by background merges) and its parts in the project's
 * segments (written by bulk writes), read together.
 */
export async function readMergedList(engine: SearchEngine, q: number, w: string): Promise<PostingList> {
  const [blocks, parts] = await Promise.all([
    engine.t.textBlocks.where('[q+w+b]').between([q, w, Dexie.minKey], [q, w, maxKey()]).toArray(),
    segmentLists(engine.t.textSegs, q, segmentsOf(engine, q), w),
  ])
  const list = decodeBlocks(inTermOrder(blocks))
  return parts.length === 0 ? list : (mergeLists([list, ...parts]) ?? list)
}

/** The segments of project `q`, as the last committed merge left them. */
function segmentsOf(engine: SearchEngine, q: number) {
  for (const row of engine.state.projects.values()) if (row.q === q) return row.s ?? []
  return []
}
