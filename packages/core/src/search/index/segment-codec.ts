import { TERM_SEPARATOR, type TextSegRow } from './index-rows.js'
import { decodeBlocks, PostingWriter, type PostingList } from './posting-codec.js'

/*
 * Rows of a posting segment as bytes: a segment's terms in string order (the
 * order IndexedDB sorts string keys in), cut into rows of about PACK_BYTES of
 * postings. A term with more than PART_POSTINGS postings gets rows of its own,
 * PART_POSTINGS to a row: its first row is keyed by the term, the next ones by
 * the term, TERM_SEPARATOR and the part's number as a character (keys that
 * sort right after the term and before any other term). Chromium stores a
 * value of 64 KiB or more as a separate file, which takes far longer to read
 * than a row in the database; no row comes near that.
 */

/** Postings bytes after which a segment row is closed (a query reads one row per segment and term). */
export const PACK_BYTES = 8192

/** Postings of a frequent term per row of its own (at most 11 bytes each: a row stays well below 64 KiB). */
export const PART_POSTINGS = 2048

/** The key of part `k` (from 0) of a term's postings. */
export function partKey(term: string, k: number): string {
  return k === 0 ? term : `${term}${TERM_SEPARATOR}${String.fromCharCode(k)}`
}

/** Whether a row is a continuation of a frequent term's postings (its key is not its term). */
export function isContinuation(row: TextSegRow): boolean {
  return row.w !== row.t && row.w.startsWith(`${row.t}${TERM_SEPARATOR}`)
}

/**
 * The rows of segment `g` of project `q` holding `terms` (any order; sorted
 * here), each term's list in increasing document number.
 */
export function segmentRows(q: number, g: number, terms: ReadonlyMap<string, PostingList>): TextSegRow[] {
  const sorted = [...terms.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const rows: TextSegRow[] = []
  let writer = new PostingWriter(0, 4 * PACK_BYTES)
  let names: string[] = []
  let counts: number[] = []
  let ends: number[] = []
  const close = () => {
    if (names.length === 0) return
    rows.push({ q, g, w: names[0]!, t: names.join(TERM_SEPARATOR), c: Uint32Array.from(counts), o: Uint32Array.from(ends), p: writer.finish() })
    writer = new PostingWriter(0, 4 * PACK_BYTES)
    names = []
    counts = []
    ends = []
  }
  for (const term of sorted) {
    const list = terms.get(term)!
    if (list.count === 0) continue
    if (list.count > PART_POSTINGS) {
      close()
      for (let k = 0, from = 0; from < list.count; k++, from += PART_POSTINGS) {
        const part = new PostingWriter(0, 8 * PART_POSTINGS)
        const to = Math.min(list.count, from + PART_POSTINGS)
        for (let i = from; i < to; i++) part.add(list.docs[i]!, list.tfs[i]!, list.kinds[i]!, list.lens[i]!)
        const p = part.finish()
        rows.push({ q, g, w: partKey(term, k), t: term, c: Uint32Array.of(to - from), o: Uint32Array.of(p.length), p })
      }
      continue
    }
    if (writer.bytes >= PACK_BYTES) close()
    // Each term's deltas start from 0, so a term decodes on its own.
    writer.restart()
    for (let i = 0; i < list.count; i++) writer.add(list.docs[i]!, list.tfs[i]!, list.kinds[i]!, list.lens[i]!)
    names.push(term)
    counts.push(list.count)
    ends.push(writer.bytes)
  }
  close()
  return rows
}

/** Every term of a segment row with its postings. */
export function termsInRow(row: TextSegRow): Array<[string, PostingList]> {
  return row.t.split(TERM_SEPARATOR).map((term, i) => [term, termAt(row, i)])
}

/** The postings of the `i`-th term of a segment row. */
export function termAt(row: TextSegRow, i: number): PostingList {
  const start = i === 0 ? 0 : row.o[i - 1]!
  return decodeBlocks([{ c: row.c[i]!, p: row.p.subarray(start, row.o[i]!) }])
}
