import { TERM_SEPARATOR, type TextSegRow } from './index-rows.js'
import { decodeBlocks, PostingWriter, type PostingList } from './posting-codec.js'

/*
 * Rows of a posting segment as bytes: a segment's terms in string order (the
 * order IndexedDB sorts string keys in), cut into rows of about PACK_BYTES of
 * postings. A term's postings are never split: a frequent term may fill a
 * row of its own.
 */

/** Postings bytes after which a segment row is closed (a query reads one row per segment and term). */
export const PACK_BYTES = 8192

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
