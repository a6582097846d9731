import { Dexie } from 'dexie'
import { batchable, docRowsOf, idHash, PREFIX_LENGTHS, rowsWithId, type StoredDocRow } from './doc-batches.js'
import { TERM_SEPARATOR, type TextBatchRow, type TextDocRow } from './index-rows.js'

/*
 * Packing documents of a bulk write into batch rows (doc-batches.ts). It loads
 * with the index merger, in the background as the store opens: a bulk write
 * made before it arrives stores a row per document, as any write did before.
 */

/** Characters of ids and terms a batch row holds at most: Chromium stores a value of 64 KiB or more as a file of its own, much slower to read. */
const BATCH_CHARS = 24_000

/**
 * Packs analyzed rows, numbered from `first` on in order, into batch rows: consecutive
 * documents of one project, each row kept below {@link BATCH_CHARS}. The rows given get
 * their numbers. A batch of one is stored as a single row.
 */
export function batchRowsOf(rows: readonly TextDocRow[], first: number): StoredDocRow[] {
  const out: StoredDocRow[] = []
  let start = 0
  let chars = 0
  const flush = (end: number) => {
    if (end > start) out.push(packBatch(rows.slice(start, end), first + start))
    start = end
    chars = 0
  }
  rows.forEach((row, i) => {
    const size = row.d!.length + row.t.length + 24
    // A fact stays a row of its own (doc-batches.ts `batchable`).
    if (i > start && (!batchable(row.d!) || !batchable(rows[start]!.d!) || row.q !== rows[start]!.q || chars + size > BATCH_CHARS)) flush(i)
    chars += size
  })
  flush(rows.length)
  return out
}

function packBatch(members: readonly TextDocRow[], first: number): StoredDocRow {
  members.forEach((row, i) => {
    row.n = first + i
  })
  if (members.length === 1) return { ...members[0]! }
  const m = members.length
  const ids = members.map((r) => r.d!)
  // Ids that share a long prefix (they grow with time) give the batch one index key; others a hash each.
  const p = sharedPrefix(ids)
  const row: TextBatchRow = {
    n: first + m - 1,
    q: members[0]!.q,
    m,
    c: m,
    i: ids,
    ...(p !== undefined ? { p } : { h: ids.map(idHash) }),
    a: Float64Array.from(members, (r) => r.a),
    l: Uint32Array.from(members, (r) => r.l),
    k: Uint8Array.from(members, (r) => r.k),
    t: '',
  }
  if (members.some((r) => r.t !== '')) {
    // Each member's terms keep their separators; the members follow one another, their ends in `te`.
    let t = ''
    const te = new Uint32Array(m)
    const ti = new Uint32Array(m)
    let terms = 0
    members.forEach((r, i) => {
      t += r.t
      te[i] = t.length
      terms += r.t === '' ? 0 : r.t.split(TERM_SEPARATOR).length
      ti[i] = terms
    })
    row.t = t
    row.te = te
    row.ti = ti
    if (members.some((r) => r.f !== undefined)) {
      const f = new Uint16Array(terms).fill(1)
      members.forEach((r, i) => {
        if (r.f) f.set(r.f, i === 0 ? 0 : ti[i - 1]!)
      })
      row.f = f
    }
  }
  return row
}

/**
 * The live rows of documents `ids`, as doc-batches.ts `docsById` finds them one by one, but the members of
 * batches looked up by their hashes together (one key-ordered lookup, not a request per id). Ids go
 * to the id index one equality lookup each: an encrypted store keeps a fact's id as a keyed hash.
 * It loads with the merger; before it has, documents are looked up one by one.
 */
export function docsByIds(table: Dexie.Table<StoredDocRow, number>, ids: readonly string[]): Promise<TextDocRow[]> {
  const wanted = new Set(ids)
  const batched = ids.filter(batchable)
  return Dexie.Promise.all([
    Dexie.Promise.all(
      ids.map((id) =>
        table
          .where('d')
          .equals(id)
          .toArray()
          .then((rows) => rowsWithId(rows, id)),
      ),
    ),
    // The keys first: a batch holding many of the ids is read once, not once per id.
    Dexie.Promise.all([table.where('h').anyOf(batched.map(idHash)).primaryKeys(), prefixedKeys(table, batched)]).then(([hashed, prefixed]) =>
      table.bulkGet([...new Set([...hashed, ...prefixed])]),
    ),
  ]).then(([single, batches]) => {
    const members = batches.flatMap((row) => (row ? docRowsOf(row).filter((member) => wanted.has(member.d!)) : []))
    return [...single.flat(), ...members]
  })
}

/** The index key of a batch with these member ids: their shared prefix cut to a length of {@link PREFIX_LENGTHS}; undefined when it is shorter than all. */
export function sharedPrefix(ids: readonly string[]): string | undefined {
  let lo = ids[0]!
  let hi = lo
  for (const id of ids) {
    if (id < lo) lo = id
    else if (id > hi) hi = id
  }
  // The prefix every id shares is the one the lowest and the highest share.
  let n = 0
  while (n < lo.length && lo.charCodeAt(n) === hi.charCodeAt(n)) n++
  const cut = PREFIX_LENGTHS.filter((length) => length <= n).pop()
  return cut === undefined ? undefined : lo.slice(0, cut)
}

/** Keys of the batches found by a prefix (`p`) of one of `ids`: every batch's key is read (one per batch, not per member) and matched. */
function prefixedKeys(table: Dexie.Table<StoredDocRow, number>, ids: readonly string[]): Promise<number[]> {
  if (ids.length === 0) return Dexie.Promise.resolve([]) as unknown as Promise<number[]>
  const sorted = [...ids].sort()
  // Some id starts with `prefix` when the first id not below it does.
  const prefixes = (prefix: string): boolean => {
    let lo = 0
    let hi = sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (sorted[mid]! < prefix) lo = mid + 1
      else hi = mid
    }
    return lo < sorted.length && sorted[lo]!.startsWith(prefix)
  }
  // One walk of the index gives each batch's key and its row's number.
  const found: number[] = []
  return table
    .orderBy('p')
    .eachPrimaryKey((primaryKey, cursor) => {
      if (prefixes(cursor.key as string)) found.push(primaryKey)
    })
    .then(() => found) as unknown as Promise<number[]>
}

/** Fewest consecutive merged documents worth packing into a batch row. */
const PACK_AT = 2

/**
 * Batch rows for the single rows of documents a merge just folded into blocks: each run of
 * consecutive documents of one project (facts stay rows of their own) becomes batch rows without
 * terms, as a bulk write stores them, since their postings now live in blocks. A message appended
 * on its own costs a row with a copy of its terms and an index key of its 44-character id; packed,
 * a run of them shares one row and, their ids growing with time, one prefix key. Returns the rows
 * to put and the keys to delete (the last member's key is the batch's, overwritten by the put).
 */
export function packMerged(rows: readonly StoredDocRow[]): { puts: StoredDocRow[]; deletes: number[] } {
  const puts: StoredDocRow[] = []
  const deletes: number[] = []
  let run: TextDocRow[] = []
  const flush = () => {
    if (run.length >= PACK_AT) {
      const packed = batchRowsOf(run, run[0]!.n!)
      const kept = new Set(packed.map((row) => row.n))
      for (const row of run) if (!kept.has(row.n!)) deletes.push(row.n!)
      puts.push(...packed)
    }
    run = []
  }
  for (const row of rows) {
    const single = !('m' in row) && row.x === undefined && row.d !== undefined && batchable(row.d)
    const last = run[run.length - 1]
    if (!single || (last && (last.n! + 1 !== row.n || last.q !== row.q))) flush()
    if (single) run.push({ n: row.n!, q: row.q, d: row.d!, a: row.a, l: row.l, t: '', k: row.k })
  }
  flush()
  return { puts, deletes }
}
