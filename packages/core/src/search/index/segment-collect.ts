import { termsOf, tfAt, type TextDocRow } from './index-rows.js'
import type { PostingList } from './posting-codec.js'
import type { FreshSegment } from './segments.js'

/**
 * The postings of document rows (live, in increasing number) as one new
 * segment per project, with its documents: a pass that numbers each project's terms and counts
 * their postings, and one that places every posting in typed arrays shared by
 * the project's terms (each term's list is a view). A bulk write adds
 * millions of postings; no array or key is built per posting.
 */
export function collectSegments(rows: readonly TextDocRow[]): Map<number, FreshSegment> {
  const projects = new Map<number, Collected>()
  const perRow = new Uint32Array(rows.length)
  let postings = new Int32Array(1024)
  let at = 0
  rows.forEach((row, r) => {
    let p = projects.get(row.q)
    if (!p)
      projects.set(
        row.q,
        (p = { ids: new Map(), names: [], counts: [], g: row.n!, total: 0, next: new Int32Array(0), lists: undefined!, docs: { n: [], d: [], a: [] } }),
      )
    p.docs.n.push(row.n!)
    p.docs.d.push(row.d!)
    p.docs.a.push(row.a)
    const words = termsOf(row)
    perRow[r] = words.length
    if (at + words.length > postings.length) {
      const grown = new Int32Array(Math.max(postings.length * 2, at + words.length))
      grown.set(postings)
      postings = grown
    }
    for (const w of words) {
      let id = p.ids.get(w)
      if (id === undefined) {
        id = p.names.length
        p.ids.set(w, id)
        p.names.push(w)
        p.counts.push(0)
      }
      p.counts[id]!++
      postings[at++] = id
    }
    p.total += words.length
  })
  const out = new Map<number, FreshSegment>()
  for (const [q, p] of projects) {
    const lists = { docs: new Uint32Array(p.total), tfs: new Uint16Array(p.total), kinds: new Uint8Array(p.total), lens: new Uint32Array(p.total) }
    p.lists = lists
    p.next = new Int32Array(p.names.length)
    const terms = new Map<string, PostingList>()
    let from = 0
    p.names.forEach((w, id) => {
      const to = from + p.counts[id]!
      p.next[id] = from
      terms.set(w, {
        count: to - from,
        docs: lists.docs.subarray(from, to),
        tfs: lists.tfs.subarray(from, to),
        kinds: lists.kinds.subarray(from, to),
        lens: lists.lens.subarray(from, to),
      })
      from = to
    })
    if (terms.size > 0) out.set(q, { g: p.g, terms, docs: p.docs })
  }
  // Second pass: each posting to the next free place of its term (documents stay in order).
  at = 0
  rows.forEach((row, r) => {
    const p = projects.get(row.q)!
    for (let i = 0; i < perRow[r]!; i++) {
      const j = p.next[postings[at++]!]!++
      p.lists.docs[j] = row.n!
      p.lists.tfs[j] = Math.min(0xffff, tfAt(row, i))
      p.lists.kinds[j] = row.k
      p.lists.lens[j] = row.l
    }
  })
  return out
}

/** A project's terms while collecting: numbers, names, counts, and then where each term's next posting goes. */
interface Collected {
  ids: Map<string, number>
  names: string[]
  counts: number[]
  /** The segment's number: its first (lowest) document number. */
  g: number
  total: number
  next: Int32Array
  lists: { docs: Uint32Array; tfs: Uint16Array; kinds: Uint8Array; lens: Uint32Array }
  /** The documents of the segment (numbers, ids, times). */
  docs: { n: number[]; d: string[]; a: number[] }
}
