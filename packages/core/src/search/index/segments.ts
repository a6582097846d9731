import { Dexie, type Table } from 'dexie'
import { maxKey } from '../../store/keys.js'
import type { SegmentRef, TextDirRow, TextSegDocsRow, TextSegRow } from './index-rows.js'
import { emptyList, type PostingList } from './posting-codec.js'
import { segmentRows, termsInRow } from './segment-codec.js'
import { concatDocs, dirRowOf, docsOfRow, docsRowOf, type DirTable, type SegDocsTable, type SegmentDocs } from './segment-dirs.js'

/** The segment table (schema.ts declares it untyped). */
export type SegmentTable = Table<TextSegRow, [number, number, string]>

/** The tables segments live in; directories and document lists are absent in schema upgrades before they existed. */
export interface SegmentTables {
  textSegs: SegmentTable
  textDirs?: DirTable | undefined
  textSegDocs?: SegDocsTable | undefined
}

/** What a merge does to a project's segments: its new list, rows to write, and segments whose rows (and directories) go first. */
export interface SegmentUpdate {
  refs: SegmentRef[]
  puts: TextSegRow[]
  /** The directory of the segment written (when the store keeps them). */
  dir?: TextDirRow
  /** Its document list (when the store keeps them and every part's documents are known). */
  docs?: TextSegDocsRow
  drop: number[]
}

/** A new segment: its number (its lowest document number, above every stored segment's documents), its terms and its documents. */
export interface FreshSegment {
  g: number
  terms: ReadonlyMap<string, PostingList>
  docs?: SegmentDocs
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
  t: SegmentTables,
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
  if (stored.length === 0) return written(t, q, fresh!.g, fresh!.terms, fresh!.docs, all, [])
  const [rowsOf, docsOf] = await Promise.all([
    Promise.all(stored.map((ref) => t.textSegs.where('[q+g+w]').between([q, ref.g, Dexie.minKey], [q, ref.g, maxKey()]).toArray())),
    t.textSegDocs ? t.textSegDocs.bulkGet(stored.map((ref) => [q, ref.g] as [number, number])) : [],
  ])
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
  const docs = concatDocs([...stored.map((_, i) => docsOfRow(docsOf[i])), ...(fresh ? [fresh.docs] : [])], dead)
  const kept = [...all.slice(0, from), ...(c > 0 ? [{ g, c }] : [])]
  return written(
    t,
    q,
    g,
    terms,
    docs,
    kept,
    stored.map((ref) => ref.g),
  )
}

/** The update that writes segment `g` holding `terms`, with its directory when the store keeps them. */
function written(
  t: SegmentTables,
  q: number,
  g: number,
  terms: ReadonlyMap<string, PostingList>,
  docs: SegmentDocs | undefined,
  refs: SegmentRef[],
  drop: number[],
): SegmentUpdate {
  const puts = segmentRows(q, g, terms)
  const update: SegmentUpdate = { refs, puts, drop }
  if (puts.length === 0) return update
  if (t.textDirs) update.dir = dirRowOf(q, g, puts)
  if (t.textSegDocs && docs) update.docs = docsRowOf(q, g, docs)
  return update
}

/** Deletes the rows, directories and document lists of segments of a project. */
export function dropSegments(t: SegmentTables, q: number, gs: readonly number[]): Promise<unknown> {
  const keys = gs.map((g) => [q, g] as [number, number])
  return Promise.all([
    ...gs.map((g) => t.textSegs.where('[q+g+w]').between([q, g, Dexie.minKey], [q, g, maxKey()]).delete()),
    t.textDirs && keys.length > 0 ? t.textDirs.bulkDelete(keys) : undefined,
    t.textSegDocs && keys.length > 0 ? t.textSegDocs.bulkDelete(keys) : undefined,
  ])
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
