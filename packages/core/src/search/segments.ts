import { Dexie, type Table } from 'dexie'
import { maxKey } from '../keys.js'
import type { SegmentRef, TextSegRow } from './index-rows.js'
import { emptyList, type PostingList } from './posting-codec.js'
import { segmentRows, termsInRow } from './segment-codec.js'

/** The segment table (schema.ts declares it untyped). */
export type SegmentTable = Table<TextSegRow, [number, number, string]>

/** What a merge does to a project's segments: its new list, rows to write, and segments whose rows go first. */
export interface SegmentUpdate {
  refs: SegmentRef[]
  puts: TextSegRow[]
  drop: number[]
}

/** A new segment: its number (its lowest document number, above every stored segment's documents) and its terms. */
export interface FreshSegment {
  g: number
  terms: ReadonlyMap<string, PostingList>
}

/**
 * Adds a segment to a project and compacts: the newest segments are merged
 * into one while the segment before them holds no more postings than they do
 * together (a binary counter: a project keeps about log2(size / batch)
 * segments, and a posting is rewritten about as often). With `dead`, every
 * segment of the project is rewritten without those documents (a purge).
 * Stored rows are read here; writing is the caller's (drops first: a merged
 * segment keeps the number of its first part).
 */
export async function updateSegments(
  table: SegmentTable,
  q: number,
  refs: readonly SegmentRef[],
  fresh: FreshSegment | undefined,
  dead: ReadonlySet<number> | undefined,
): Promise<SegmentUpdate | undefined> {
  const all = [...refs]
  if (fresh) {
    let c = 0
    for (const list of fresh.terms.values()) c += list.count
    if (c > 0) all.push({ g: fresh.g, c })
  }
  if (all.length === 0 || (all.length === refs.length && !dead)) return undefined
  let from = all.length - 1
  if (dead) from = 0
  else {
    let newer = all[from]!.c
    while (from > 0 && all[from - 1]!.c <= newer) newer += all[--from]!.c
  }
  const merging = all.slice(from)
  const stored = merging.filter((ref) => ref.g !== fresh?.g)
  if (stored.length === 0) return { refs: all, puts: segmentRows(q, fresh!.g, fresh!.terms), drop: [] }
  const rowsOf = await Promise.all(stored.map((ref) => table.where('[q+g+w]').between([q, ref.g, Dexie.minKey], [q, ref.g, maxKey()]).toArray()))
  // Segments cover increasing, disjoint document ranges: a term's parts concatenate in segment order.
  const parts = new Map<string, PostingList[]>()
  const push = (term: string, list: PostingList) => {
    const known = parts.get(term)
    if (known) known.push(list)
    else parts.set(term, [list])
  }
  for (const rows of rowsOf) for (const row of rows) for (const [term, list] of termsInRow(row)) push(term, list)
  if (fresh) for (const [term, list] of fresh.terms) push(term, list)
  const terms = new Map<string, PostingList>()
  let c = 0
  for (const [term, lists] of parts) {
    const list = concatLists(lists, dead)
    if (list.count === 0) continue
    terms.set(term, list)
    c += list.count
  }
  const g = merging[0]!.g
  return {
    refs: [...all.slice(0, from), ...(c > 0 ? [{ g, c }] : [])],
    puts: segmentRows(q, g, terms),
    drop: stored.map((ref) => ref.g),
  }
}

/** Deletes the rows of segments of a project. */
export function dropSegments(table: SegmentTable, q: number, gs: readonly number[]): Promise<unknown> {
  return Promise.all(gs.map((g) => table.where('[q+g+w]').between([q, g, Dexie.minKey], [q, g, maxKey()]).delete()))
}

/** Lists one after the other, without the postings of `dead` documents. */
function concatLists(lists: readonly PostingList[], dead: ReadonlySet<number> | undefined): PostingList {
  if (lists.length === 1 && !dead) return lists[0]!
  let total = 0
  for (const l of lists) total += l.count
  const out = emptyList(total)
  let i = 0
  for (const l of lists) {
    for (let j = 0; j < l.count; j++) {
      if (dead?.has(l.docs[j]!)) continue
      out.docs[i] = l.docs[j]!
      out.tfs[i] = l.tfs[j]!
      out.kinds[i] = l.kinds[j]!
      out.lens[i] = l.lens[j]!
      i++
    }
  }
  out.count = i
  return out
}
