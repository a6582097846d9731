/** Merge-time checks of an import: append-only history, stored counters, auto-key duplicates. */
import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import type { Dump } from './dump-validate.js'
import { primaryKeyOf } from './dump-scope.js'
import { MemoryError } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'

type Row = Record<string, unknown>

/** JSON text of a value with object keys sorted at every level: equal data, equal text. */
export function stableJson(value: unknown): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable)
    if (v === null || typeof v !== 'object') return v
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, stable((v as Row)[k])]),
    )
  }
  return JSON.stringify(stable(value))
}

/**
 * What a merge keeps of a stored session the dump names: its arrival counter, and the
 * stamp of its stored messages without their own (clock-restore.ts).
 */
export interface StoredCounters {
  lastSeq: number
  lastAt?: string
}

/**
 * Checks, before a `merge` writes anything, that it does not rewrite append-only history:
 * a journal record or a message the store already holds at a (session, seq) must be the
 * same record in the dump. Run inside the import's transaction.
 * @returns the stored counters of the sessions the dump names, so a merged session row
 * never moves them back.
 * @throws MemoryError `conflict` naming the first session whose history differs.
 */
export async function checkMergeHistory(ctx: StoreContext, dump: Dump): Promise<Map<string, StoredCounters>> {
  const journal = (dump.tables.journal ?? []) as Row[]
  if (journal.length > 0) {
    const stored = await ctx.db.table('journal').bulkGet(journal.map((r) => [r.sessionId as string, r.seq as number]))
    const i = stored.findIndex((row, i) => row !== undefined && stableJson(row) !== stableJson(journal[i]))
    if (i >= 0) throw diverged('journal session', journal[i]!.sessionId, journal[i]!.seq)
  }
  const messages = (dump.tables.messages ?? []) as Row[]
  const sessionIds = [...new Set([...((dump.tables.sessions ?? []) as Row[]).map((s) => s.id), ...messages.map((m) => m.sessionId)])] as string[]
  const sessions = await ctx.db.sessions.bulkGet(sessionIds)
  const lastSeq = new Map<string, StoredCounters>()
  for (const s of sessions) if (s) lastSeq.set(s.id, s.lastAt === undefined ? { lastSeq: s.lastSeq } : { lastSeq: s.lastSeq, lastAt: s.lastAt })
  const bySession = new Map<string, Row[]>()
  for (const m of messages) {
    const id = m.sessionId as string
    if (!lastSeq.has(id)) continue
    const list = bySession.get(id)
    if (list) list.push(m)
    else bySession.set(id, [m])
  }
  for (const [sessionId, rows] of bySession) {
    const stored = await ctx.db.messages.where('[sessionId+seq]').between([sessionId, Dexie.minKey], [sessionId, maxKey()]).toArray()
    const idAt = new Map(stored.map((m) => [m.seq, m.id]))
    const other = rows.find((m) => idAt.has(m.seq as number) && idAt.get(m.seq as number) !== m.id)
    if (other) throw diverged('session', sessionId, other.seq)
  }
  return lastSeq
}

function diverged(what: string, sessionId: unknown, seq: unknown): MemoryError {
  return new MemoryError(
    'conflict',
    `The dump's ${what} ${JSON.stringify(sessionId)} holds another record at seq ${String(seq)} than this store: merging would rewrite its history. Import it with mode 'replace', or into a fresh store`,
  )
}

/**
 * Rows of an auto-increment table (usage, outcomes) get new keys on import, so a row the
 * store already holds (same fields, whatever its key) would be appended again by a second
 * merge of the same dump: drop those, keeping as many copies as the dump has beyond the stored ones.
 */
export async function withoutStoredCopies(ctx: StoreContext, table: string, rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows
  const field = primaryKeyOf(ctx.db, table).fields[0]!
  const stored = new Map<string, number>()
  for (const row of await ctx.db.table(table).toArray()) {
    const sig = signature(row as Row, field)
    stored.set(sig, (stored.get(sig) ?? 0) + 1)
  }
  return rows.filter((row) => {
    const sig = signature(row, field)
    const left = stored.get(sig) ?? 0
    if (left === 0) return true
    stored.set(sig, left - 1)
    return false
  })
}

/** Order-independent JSON text of a row without its key field. */
function signature(row: Row, keyField: string): string {
  const { [keyField]: _key, ...rest } = row
  return stableJson(rest)
}
