import { Dexie } from 'dexie'
import { TERM_SEPARATOR, type SegmentRef, type TextSegRow } from './index-rows.js'
import { emptyList, type PostingList } from './posting-codec.js'
import { partKey, termAt } from './segment-codec.js'
import { termPlace, type SegmentDir } from './segment-dirs.js'
import type { SegmentTable } from './segments.js'

/* Reading posting segments (queries only; the merger writes them: segments.ts). */

/**
 * The postings of `term` in each segment of project `q` that holds it, in segment order. A segment
 * whose directory `dirOf` gives is read only when it holds the term, by the key of its row (or
 * the key range of its rows, for a frequent term); one without (not loaded, or written before
 * directories) by one key-range read, and a second for the further rows of a frequent term.
 */
export async function segmentLists(
  tableOf: SegmentTable | (() => SegmentTable),
  q: number,
  refs: readonly SegmentRef[],
  term: string,
  dirOf: (g: number) => SegmentDir | null | undefined = () => undefined,
): Promise<PostingList[]> {
  if (refs.length === 0) return []
  // Taken only when a row must be read: a term a directory shows absent needs no table (a search from memory has none).
  const table = () => (typeof tableOf === 'function' ? tableOf() : tableOf)
  const reads = refs.map((ref): Promise<PostingList | undefined> | undefined => {
    const dir = dirOf(ref.g)
    if (dir) {
      const place = termPlace(dir, q, ref.g, term)
      if (!place) return undefined
      if (place.split) return partsOf(table(), q, ref.g, term, 0)
      return table()
        .get(place.key)
        .then((row) => (row ? termAt(row, place.i) : undefined))
    }
    // The row holding a term is the last one of its segment whose first term is not above it.
    return table()
      .where('[q+g+w]')
      .between([q, ref.g, Dexie.minKey], [q, ref.g, term], true, true)
      .last()
      .then((row) => {
        const list = row ? termInRow(row, term) : undefined
        // A row of the term alone may be the first of several.
        return list && row!.t === term ? partsOf(table(), q, ref.g, term, 1).then((rest) => concatParts([list, ...(rest ? [rest] : [])])) : list
      })
  })
  return (await Promise.all(reads)).filter((list): list is PostingList => list !== undefined)
}

/** The postings of a term kept in rows of its own, from part `from` on (undefined: none). */
function partsOf(table: SegmentTable, q: number, g: number, term: string, from: number): Promise<PostingList | undefined> {
  return table
    .where('[q+g+w]')
    .between([q, g, partKey(term, from)], [q, g, `${term}\u0001`], true, false)
    .toArray()
    .then((rows) => (rows.length === 0 ? undefined : concatParts(rows.map((row) => termAt(row, 0)))))
}

/** Parts of one term's postings (each after the one before), as one list. */
function concatParts(parts: readonly PostingList[]): PostingList {
  if (parts.length === 1) return parts[0]!
  let total = 0
  for (const part of parts) total += part.count
  const out = emptyList(total)
  for (const part of parts) {
    out.docs.set(part.docs.subarray(0, part.count), out.count)
    out.tfs.set(part.tfs.subarray(0, part.count), out.count)
    out.kinds.set(part.kinds.subarray(0, part.count), out.count)
    out.lens.set(part.lens.subarray(0, part.count), out.count)
    out.count += part.count
  }
  return out
}

/** The postings of `term` in a segment row, or undefined when the row does not hold it. */
export function termInRow(row: TextSegRow, term: string): PostingList | undefined {
  const terms = row.t.split(TERM_SEPARATOR)
  let lo = 0
  let hi = terms.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = terms[mid]!
    if (at === term) return termAt(row, mid)
    if (at < term) lo = mid + 1
    else hi = mid - 1
  }
  return undefined
}

/** Lists in increasing document number, each covering its own documents, merged into one. */
export function mergeLists(lists: ReadonlyArray<PostingList>): PostingList | undefined {
  const parts = lists.filter((l) => l.count > 0)
  if (parts.length <= 1) return parts[0]
  let total = 0
  for (const l of parts) total += l.count
  const out = emptyList(total)
  const at = new Array<number>(parts.length).fill(0)
  for (let i = 0; i < total; i++) {
    let best = -1
    for (let k = 0; k < parts.length; k++) {
      if (at[k]! >= parts[k]!.count) continue
      if (best < 0 || parts[k]!.docs[at[k]!]! < parts[best]!.docs[at[best]!]!) best = k
    }
    const from = parts[best]!
    const j = at[best]!++
    out.docs[i] = from.docs[j]!
    out.tfs[i] = from.tfs[j]!
    out.kinds[i] = from.kinds[j]!
    out.lens[i] = from.lens[j]!
  }
  out.count = total
  return out
}
