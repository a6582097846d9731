import { Dexie } from 'dexie'
import { TERM_SEPARATOR, type TextBatchRow, type TextDocRow } from './index-rows.js'

/*
 * Documents of a bulk write (a large `appendMany`, an import) are stored as
 * batch rows: one `textDocs` row holds up to a few hundred documents numbered
 * one after the other. IndexedDB charges for every row written far more than
 * for its bytes (in Chromium a row costs about as much as a whole message row),
 * so one row per document doubled the cost of a bulk write. Everything that
 * reads document rows sees the members of a batch as the single rows they stand
 * for ({@link docRowsOf}); removing a member rewrites its batch ({@link withoutMembers}).
 */

/** A stored row of the document table: one document, or a batch of documents written together. */
export type StoredDocRow = TextDocRow | TextBatchRow

/** Characters of ids and terms a batch row holds at most: Chromium stores a value of 64 KiB or more as a file of its own, much slower to read. */
const BATCH_CHARS = 24_000

const batches = new WeakMap<TextDocRow, TextBatchRow>()

/** True for a batch row. */
export function isBatch(row: StoredDocRow): row is TextBatchRow {
  return (row as TextBatchRow).m !== undefined
}

/** The batch row a member's row came from (undefined for a single row). */
export function batchOf(row: TextDocRow): TextBatchRow | undefined {
  return batches.get(row)
}

/** The number of a batch's first document. */
export function firstOf(row: TextBatchRow): number {
  return row.n - row.m + 1
}

/** The row of member `i` of a batch: live, or dead (removed after a merge, not yet purged); undefined for a member removed before any merge. */
function memberAt(row: TextBatchRow, i: number, dead: ReadonlySet<number> | undefined): TextDocRow | undefined {
  const n = firstOf(row) + i
  let member: TextDocRow
  if (dead?.has(i)) member = { n, q: row.q, a: row.a[i]!, l: row.l[i]!, t: '', k: row.k[i]!, x: 1 }
  else {
    const d = row.d[i]!
    if (d === '') return undefined
    const from = row.te && i > 0 ? row.te[i - 1]! : 0
    member = { n, q: row.q, d, a: row.a[i]!, l: row.l[i]!, t: row.te ? row.t.slice(from, row.te[i]) : '', k: row.k[i]! }
    if (row.f && row.ti) member.f = row.f.subarray(i === 0 ? 0 : row.ti[i - 1]!, row.ti[i])
  }
  batches.set(member, row)
  return member
}

/** The single rows a stored row stands for, in document order. */
export function docRowsOf(row: StoredDocRow): TextDocRow[] {
  if (!isBatch(row)) return [row]
  const dead = row.r && row.r.length > 0 ? new Set(row.r) : undefined
  const out: TextDocRow[] = []
  for (let i = 0; i < row.m; i++) {
    const member = memberAt(row, i, dead)
    if (member) out.push(member)
  }
  return out
}

/** The single rows of stored rows, in order. */
export function expandRows(rows: readonly StoredDocRow[]): TextDocRow[] {
  return rows.length > 0 && rows.every((row) => !isBatch(row)) ? (rows as TextDocRow[]) : rows.flatMap(docRowsOf)
}

/** The row of document `n` within the stored row at or above it (a batch row is keyed by its last document). */
export function docAt(row: StoredDocRow | undefined, n: number): TextDocRow | undefined {
  if (!row) return undefined
  if (!isBatch(row)) return row.n === n ? row : undefined
  const i = n - firstOf(row)
  if (i < 0 || i >= row.m) return undefined
  return memberAt(row, i, row.r && row.r.length > 0 ? new Set(row.r) : undefined)
}

/** The live rows of document `id` among stored rows found by id. */
export function rowsWithId(rows: readonly StoredDocRow[], id: string): TextDocRow[] {
  return rows.flatMap((row) => (isBatch(row) ? docRowsOf(row).filter((member) => member.d === id) : [row]))
}

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
    if (i > start && (row.q !== rows[start]!.q || chars + size > BATCH_CHARS)) flush(i)
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
  const row: TextBatchRow = {
    n: first + m - 1,
    q: members[0]!.q,
    m,
    c: m,
    d: members.map((r) => r.d!),
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
 * A batch without the members numbered `ns`: a member merged already (at or below
 * `mark`) stays as a dead document, counted, until a purge takes its postings
 * out; one never merged just goes. Undefined when nothing of the batch is left.
 */
export function withoutMembers(row: TextBatchRow, ns: Iterable<number>, mark: number): TextBatchRow | undefined {
  const next: TextBatchRow = { ...row, d: [...row.d], r: [...(row.r ?? [])] }
  const first = firstOf(row)
  for (const n of ns) {
    const i = n - first
    if (i < 0 || i >= row.m || next.d[i] === '') continue
    next.d[i] = ''
    if (n <= mark) next.r!.push(i)
    else next.c--
  }
  return settle(next)
}

/** A batch without the dead members numbered `ns` (a purge took their postings out). */
export function withoutDead(row: TextBatchRow, ns: ReadonlySet<number>): TextBatchRow | undefined {
  const first = firstOf(row)
  const r = (row.r ?? []).filter((i) => !ns.has(first + i))
  return settle({ ...row, r, c: row.c - ((row.r?.length ?? 0) - r.length) })
}

function settle(row: TextBatchRow): TextBatchRow | undefined {
  if (row.c <= 0) return undefined
  if (row.r && row.r.length > 0) row.x = 1
  else {
    delete row.r
    delete row.x
  }
  return row
}

/**
 * Rewrites the batches that members of `rows` came from, as `edit` leaves them (deleting a
 * batch with nothing left). `current` holds this transaction's latest copy of each batch, so
 * two edits of one batch in a transaction build on each other.
 */
export function rewriteBatches(
  table: Dexie.Table<StoredDocRow, number>,
  rows: readonly TextDocRow[],
  current: Map<number, TextBatchRow | undefined>,
  edit: (batch: TextBatchRow, ns: Set<number>) => TextBatchRow | undefined,
): Promise<unknown> {
  const byBatch = new Map<number, { batch: TextBatchRow; ns: Set<number> }>()
  for (const row of rows) {
    const batch = batchOf(row)
    if (!batch) continue
    const entry = byBatch.get(batch.n)
    if (entry) entry.ns.add(row.n!)
    else byBatch.set(batch.n, { batch, ns: new Set([row.n!]) })
  }
  const puts: TextBatchRow[] = []
  const deletes: number[] = []
  for (const [key, { batch, ns }] of byBatch) {
    const base = current.has(key) ? current.get(key) : batch
    if (!base) continue
    const next = edit(base, ns)
    current.set(key, next)
    if (next) puts.push(next)
    else deletes.push(key)
  }
  return Dexie.Promise.all([puts.length > 0 ? table.bulkPut(puts) : undefined, deletes.length > 0 ? table.bulkDelete(deletes) : undefined])
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
