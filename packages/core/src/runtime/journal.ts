import { Dexie, type Table } from 'dexie'
import { maxKey } from '../store/keys.js'
import { invalidInput } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { DEFAULT_PAGE_SIZE, checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkJson, checkLimit, checkNumber, checkOptions, checkTime, type Json } from '../store/validate.js'
import { read, write, type WriteScope } from '../store/write.js'

/** One append-only journal record of an agent session. */
export interface JournalRecord {
  sessionId: string
  seq: number
  kind: string
  payload: Json
  occurredAt: number
  triggerId?: string
  idempotencyKey?: string
}
/** What `journal.append` takes. */
export interface JournalEntry {
  kind: string
  payload: Json
  triggerId?: string
  idempotencyKey?: string
  occurredAt?: number
}
/** What `journal.load` returns: the whole session, oldest first. */
export interface JournalSnapshot {
  sessionId: string
  lastSeq?: number
  latestOutcome?: JournalRecord
  records: JournalRecord[]
}
/** Options of `journal.page`: `since`/`until` bound `occurredAt` (both inclusive), `after` is a seq cursor. */
export interface JournalPageOptions extends PageOptions<number> {
  since?: number
  until?: number
}
/** A journal session as `journal.sessions` lists it: first/last `occurredAt` and the number of records. */
export interface JournalSessionInfo {
  sessionId: string
  first: number
  last: number
  count: number
}
/** Options of {@link JournalApi.sessions}. */
export interface ListJournalSessionsOptions extends PageOptions {
  since?: number
  until?: number
}

/** A stored journal record; `resumeToken` is copied out of approval payloads for lookup. */
export interface JournalRow extends JournalRecord {
  resumeToken?: string
}
/** Per-session counters: the next seq and the time range. */
export interface JournalSessionRow {
  sessionId: string
  lastSeq: number
  count: number
  first: number
  last: number
}

/** Journal record kinds with a meaning to the SDK. */
export const OUTCOME_KIND = 'outcome'
export const APPROVAL_PENDING = 'approval.pending'
export const APPROVAL_RESOLVED = 'approval.resolved'
/** Largest payload (bytes of its JSON text). */
export const MAX_PAYLOAD_BYTES = 1024 * 1024
const MAX_KIND = 200

/** The tables one journal append writes. */
export const JOURNAL_TABLES = ['journal', 'journalSessions'] as const

/** The agent runtime's journal: append-only typed records per session with a gap-free `seq`. */
export interface JournalApi {
  /**
   * Appends a record with the next seq of the session (1, 2, 3…, gap-free even under
   * concurrent appends). Repeating an `idempotencyKey` already used in the session returns
   * the record written first and writes nothing.
   * @throws MemoryError `invalid_input` on a bad id, kind, time or non-JSON payload;
   * `limit_exceeded` when the payload is larger than 1 MiB as JSON.
   */
  append(sessionId: string, entry: JournalEntry): Promise<JournalRecord>
  /** Every record of a session, oldest first, with the last seq and latest `outcome` record. @throws MemoryError `invalid_input`. */
  load(sessionId: string): Promise<JournalSnapshot>
  /**
   * Records in seq order after the cursor `after`, keeping those whose `occurredAt` lies in
   * [since, until]. `next` is the cursor for the following page, absent on the last page.
   * @throws MemoryError `invalid_input`.
   */
  page(sessionId: string, options?: JournalPageOptions): Promise<Page<JournalRecord, number>>
  /** Sessions with records in [since, until], most recently active first. @throws MemoryError `invalid_input`. */
  sessions(options?: ListJournalSessionsOptions): Promise<Page<JournalSessionInfo>>
  /** The latest record of kind `outcome` with that idempotency key. @throws MemoryError `invalid_input`. */
  findOutcome(sessionId: string, idempotencyKey: string): Promise<JournalRecord | undefined>
  /**
   * The `approval.pending` record carrying `payload.resumeToken === resumeToken`, unless a
   * later `approval.resolved` with that token cleared it. @throws MemoryError `invalid_input`.
   */
  pendingApproval(sessionId: string, resumeToken: string): Promise<JournalRecord | undefined>
}

/** The journal table, typed. */
export function journalTable(ctx: StoreContext): Table<JournalRow, [string, number]> {
  return ctx.db.table<JournalRow, [string, number]>('journal')
}
function sessionsTable(ctx: StoreContext): Table<JournalSessionRow, string> {
  return ctx.db.table<JournalSessionRow, string>('journalSessions')
}

/** A journal entry checked and ready to write (occurredAt still optional). */
export type CheckedEntry = JournalEntry

/**
 * Validates an entry completely before anything is written.
 * @throws MemoryError `invalid_input`, `limit_exceeded`.
 */
export function checkEntry(entry: unknown): CheckedEntry {
  const e = checkOptions('entry', entry as JournalEntry, ['kind', 'payload', 'triggerId', 'idempotencyKey', 'occurredAt'])
  const kind = checkId('kind', e.kind)
  if (kind.length > MAX_KIND) throw invalidInput(`kind is longer than ${MAX_KIND} characters`)
  if (!('payload' in e)) throw invalidInput('entry.payload is required (use null for no payload)')
  checkJson('payload', e.payload, MAX_PAYLOAD_BYTES)
  const out: CheckedEntry = { kind, payload: e.payload as Json }
  if (e.triggerId !== undefined) out.triggerId = checkId('triggerId', e.triggerId)
  if (e.idempotencyKey !== undefined) out.idempotencyKey = checkId('idempotencyKey', e.idempotencyKey)
  if (e.occurredAt !== undefined) out.occurredAt = checkTime('occurredAt', e.occurredAt)
  return out
}

/**
 * Appends a checked entry inside the caller's write transaction (tables must include
 * {@link JOURNAL_TABLES}). Used by `journal.append` and by the turn lifecycle.
 */
export async function appendEntry(ctx: StoreContext, w: WriteScope, sessionId: string, entry: CheckedEntry): Promise<JournalRecord> {
  const journal = journalTable(ctx)
  if (entry.idempotencyKey !== undefined) {
    const existing = await journal.where('[sessionId+idempotencyKey]').equals([sessionId, entry.idempotencyKey]).first()
    if (existing) return toRecord(existing)
  }
  const sessions = sessionsTable(ctx)
  const counters = await sessions.get(sessionId)
  const seq = (counters?.lastSeq ?? 0) + 1
  const occurredAt = entry.occurredAt ?? ctx.now()
  const row: JournalRow = { sessionId, seq, kind: entry.kind, payload: entry.payload, occurredAt }
  if (entry.triggerId !== undefined) row.triggerId = entry.triggerId
  if (entry.idempotencyKey !== undefined) row.idempotencyKey = entry.idempotencyKey
  const token = resumeTokenOf(row)
  if (token !== undefined) row.resumeToken = token
  await journal.add(row)
  await sessions.put({
    sessionId,
    lastSeq: seq,
    count: (counters?.count ?? 0) + 1,
    first: Math.min(counters?.first ?? occurredAt, occurredAt),
    last: Math.max(counters?.last ?? occurredAt, occurredAt),
  })
  w.change('journal', 'put', journalChangeId(sessionId, seq), '')
  return toRecord(row)
}

/**
 * Rebuilds the per-session counters (last seq, count, first/last `occurredAt`) of the
 * given journal sessions from their stored records, deleting the counters of sessions
 * left without records. Import calls it so appends after an import continue the seq.
 * Call inside a write transaction over {@link JOURNAL_TABLES}.
 */
export async function recountJournalSessions(ctx: StoreContext, sessionIds: readonly string[]): Promise<void> {
  const journal = journalTable(ctx)
  for (const sessionId of sessionIds) {
    const rows = await journal.where('[sessionId+seq]').between([sessionId, Dexie.minKey], [sessionId, maxKey()]).toArray()
    if (rows.length === 0) {
      await sessionsTable(ctx).delete(sessionId)
      continue
    }
    let first = Infinity
    let last = -Infinity
    for (const r of rows) {
      if (r.occurredAt < first) first = r.occurredAt
      if (r.occurredAt > last) last = r.occurredAt
    }
    await sessionsTable(ctx).put({ sessionId, lastSeq: rows[rows.length - 1]!.seq, count: rows.length, first, last })
  }
}

/** The change-feed id of a journal record: `<sessionId>#<seq>`. */
export function journalChangeId(sessionId: string, seq: number): string {
  return `${sessionId}#${seq}`
}

function resumeTokenOf(row: JournalRow): string | undefined {
  if (row.kind !== APPROVAL_PENDING && row.kind !== APPROVAL_RESOLVED) return undefined
  const payload = row.payload
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined
  const token = payload.resumeToken
  return typeof token === 'string' && token.length > 0 ? token : undefined
}

/** A stored row as the public record (internal lookup fields dropped). */
export function toRecord(row: JournalRow): JournalRecord {
  // Most rows have no lookup field: hand them out as read, without a copy (load is a hot path).
  if (row.resumeToken === undefined) return row
  const { resumeToken: _token, ...record } = row
  return record
}

/** Creates the journal namespace of a store. */
export function createJournal(ctx: StoreContext): JournalApi {
  const tables = [...JOURNAL_TABLES]
  const bySeq = (sessionId: string, after = 0) =>
    journalTable(ctx)
      .where('[sessionId+seq]')
      .between([sessionId, after], [sessionId, maxKey()], after === 0, true)

  return {
    async append(sessionId, entry) {
      checkId('sessionId', sessionId)
      const checked = checkEntry(entry)
      return write(ctx, tables, (w) => appendEntry(ctx, w, sessionId, checked))
    },

    async load(sessionId) {
      checkId('sessionId', sessionId)
      return read(ctx, ['journal'], async () => {
        const rows = await bySeq(sessionId).toArray()
        const snapshot: JournalSnapshot = { sessionId, records: rows.map(toRecord) }
        const last = rows[rows.length - 1]
        if (last) snapshot.lastSeq = last.seq
        for (let i = rows.length - 1; i >= 0; i--) {
          if (rows[i]!.kind === OUTCOME_KIND) {
            snapshot.latestOutcome = toRecord(rows[i]!)
            break
          }
        }
        return snapshot
      })
    },

    async page(sessionId, options) {
      checkId('sessionId', sessionId)
      const o = checkOptions('options', options, ['since', 'until', 'after', 'limit'])
      const since = o.since === undefined ? -Infinity : checkTime('since', o.since)
      const until = o.until === undefined ? Infinity : checkTime('until', o.until)
      const after = o.after === undefined ? 0 : checkNumber('after', o.after, { min: 0, integer: true })
      const limit = checkLimit('limit', o.limit, DEFAULT_PAGE_SIZE)
      return read(ctx, tables, async () => {
        const range = bySeq(sessionId, after)
        // A filter makes Dexie walk a cursor; without a time range one bounded getAll does.
        const ranged = since === -Infinity && until === Infinity ? range : range.filter((r) => r.occurredAt >= since && r.occurredAt <= until)
        const rows = await ranged.limit(limit + 1).toArray()
        const items = rows.slice(0, limit).map(toRecord)
        return rows.length > limit ? { items, next: items[items.length - 1]!.seq } : { items }
      })
    },

    async sessions(options) {
      const o = checkPageOptions(options, ['since', 'until'])
      const since = o.since === undefined ? -Infinity : checkTime('since', o.since)
      const until = o.until === undefined ? Infinity : checkTime('until', o.until)
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      const rows = await read(ctx, tables, () => {
        const coll = since === -Infinity ? sessionsTable(ctx).orderBy('last') : sessionsTable(ctx).where('last').aboveOrEqual(since)
        return coll
          .reverse()
          .filter((s) => s.first <= until && isAfterDescending(s.last, s.sessionId, cursor))
          .limit(o.limit + 1)
          .toArray()
      })
      const items = rows.map(({ sessionId, first, last, count }) => ({ sessionId, first, last, count }))
      return pageFrom(items, o.limit, (s) => encodeCursor(s.last, s.sessionId))
    },

    async findOutcome(sessionId, idempotencyKey) {
      checkId('sessionId', sessionId)
      checkId('idempotencyKey', idempotencyKey)
      return read(ctx, tables, async () => {
        const rows = await journalTable(ctx).where('[sessionId+idempotencyKey]').equals([sessionId, idempotencyKey]).toArray()
        const outcomes = rows.filter((r) => r.kind === OUTCOME_KIND).sort((a, b) => a.seq - b.seq)
        const latest = outcomes[outcomes.length - 1]
        return latest && toRecord(latest)
      })
    },

    async pendingApproval(sessionId, resumeToken) {
      checkId('sessionId', sessionId)
      checkId('resumeToken', resumeToken)
      return read(ctx, tables, async () => {
        const latest = await journalTable(ctx)
          .where('[sessionId+resumeToken+seq]')
          .between([sessionId, resumeToken, Dexie.minKey], [sessionId, resumeToken, maxKey()])
          .last()
        return latest?.kind === APPROVAL_PENDING ? toRecord(latest) : undefined
      })
    },
  }
}
