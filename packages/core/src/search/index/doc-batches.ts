import { Dexie } from 'dexie'
import type { TextBatchRow, TextDocRow } from './index-rows.js'

/*
 * Documents of a bulk write (a large `appendMany`, an import) are stored as
 * batch rows: one `textDocs` row holds up to a few hundred documents numbered
 * one after the other. IndexedDB charges for every row written far more than
 * for its bytes (in Chromium a row costs about as much as a whole message row),
 * so one row per document doubled the cost of a bulk write. Everything that
 * reads document rows sees the members of a batch as the single rows they stand
 * for ({@link docRowsOf}); removing a member rewrites its batch ({@link withoutMembers}).
 * Batches are packed by batch-pack.ts, which loads with the index merger.
 */

/** A stored row of the document table: one document, or a batch of documents written together. */
export type StoredDocRow = TextDocRow | TextBatchRow

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

/** The member ids of a batch (`''` for a removed member). */
export function memberIds(row: TextBatchRow): string[] {
  return (row.i ?? row.d)!
}

/**
 * The hash a batch member is found by (53 bits, cyrb53): equal ids hash alike, and a lookup keeps
 * only the members whose id is the one asked for, so two ids of one hash cost a read, not a result.
 */
export function idHash(id: string): number {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/**
 * Lengths a batch's shared id prefix is cut to (`p`, one index key per row): the shortest keeps
 * 8 characters of an id after its kind (`message:`), 32 bits of the time in Engram's ids (about a
 * minute); each next one 4 more. A batch whose ids share less is found by their hashes (`h`).
 * (batch-pack.ts `sharedPrefix` gives a batch its key.)
 */
export const PREFIX_LENGTHS = [16, 20, 24, 28, 32, 36, 40, 44]

/**
 * The keys a batch holding `id` may be found by in `p`: its prefixes of the lengths of {@link PREFIX_LENGTHS}
 * (the id itself for those past its end: no batch's key is shorter than its length).
 */
export function idPrefixes(id: string): string[] {
  return PREFIX_LENGTHS.map((length) => id.slice(0, length))
}

/** Documents of kinds whose ids are random, the only ones batched: a fact's id holds its key, which an encrypted store hashes with its own key. */
export const batchable = (docId: string): boolean => !docId.startsWith('fact:')

/**
 * The live rows of document `id`: its single row, or its member of a batch (found by the id's
 * hash or by a prefix of it, or by id in batches before schema 8).
 */
export function docsById(table: Dexie.Table<StoredDocRow, number>, id: string): Promise<TextDocRow[]> {
  const lookups = [table.where('d').equals(id).toArray()]
  if (batchable(id)) lookups.push(table.where('h').equals(idHash(id)).toArray(), table.where('p').anyOf(idPrefixes(id)).toArray())
  return Dexie.Promise.all(lookups).then((found) => rowsWithId(found.flat(), id))
}

/** The row of member `i` of a batch: live, or dead (removed after a merge, not yet purged); undefined for a member removed before any merge. */
export function memberAt(row: TextBatchRow, i: number, dead: ReadonlySet<number> | undefined): TextDocRow | undefined {
  const n = firstOf(row) + i
  let member: TextDocRow
  if (dead?.has(i)) member = { n, q: row.q, a: row.a[i]!, l: row.l[i]!, t: '', k: row.k[i]!, x: 1 }
  else {
    const d = memberIds(row)[i]!
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

/** The live rows of document `id` among stored rows found by id. */
export function rowsWithId(rows: readonly StoredDocRow[], id: string): TextDocRow[] {
  return rows.flatMap((row) => (isBatch(row) ? docRowsOf(row).filter((member) => member.d === id) : [row]))
}

/**
 * A batch without the members numbered `ns`: a member merged already (at or below
 * `mark`) stays as a dead document, counted, until a purge takes its postings
 * out; one never merged just goes. Undefined when nothing of the batch is left.
 */
export function withoutMembers(row: TextBatchRow, ns: Iterable<number>, mark: number): TextBatchRow | undefined {
  const ids = [...memberIds(row)]
  const next: TextBatchRow = { ...row, [row.i ? 'i' : 'd']: ids, r: [...(row.r ?? [])] }
  if (row.h) next.h = [...row.h]
  const first = firstOf(row)
  for (const n of ns) {
    const i = n - first
    if (i < 0 || i >= row.m || ids[i] === '') continue
    ids[i] = ''
    if (next.h) next.h[i] = -1
    if (n <= mark) next.r!.push(i)
    else next.c--
  }
  return settle(next)
}

/** A rewritten batch as stored: undefined when nothing of it counts any more; marked while it holds dead members. */
export function settle(row: TextBatchRow): TextBatchRow | undefined {
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
