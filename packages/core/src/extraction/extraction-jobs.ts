import type { Table } from 'dexie'
import type { StoreContext } from '../store/store-context.js'
import type { ExtractionJobKind } from './extraction-types.js'

/** A queued background job: one turn to extract, or a session to observe or reflect on. */
export interface ExtractionJobRow {
  seq?: number
  kind: ExtractionJobKind
  projectId: string
  sessionId: string
  /** The turn an `extract` job came from, with its text (the job needs nothing else to run). */
  turnId?: string
  prompt?: string
  reply?: string
  messageIds?: string[]
  /** Estimated prompt tokens of the turn (batching). */
  tokens: number
  /** `failed`: set aside after its last attempt (`extraction.retry()` queues it again). */
  status: 'pending' | 'failed'
  attempts: number
  /** Not run before this time (epoch ms): the backoff after a failed attempt. */
  nextAt: number
  createdAt: number
  lastError?: { code: string; message: string }
}

/** The tokens a project spent on extraction on one UTC day. */
export interface ExtractionSpendRow {
  projectId: string
  /** `YYYY-MM-DD` (UTC). */
  day: string
  tokens: number
}

/** The queue's tables. */
export const JOB_TABLES = ['extractionJobs', 'extractionSpend'] as const

/** The job table of a store. */
export const jobsTable = (ctx: StoreContext): Table<ExtractionJobRow, number> => ctx.db.table<ExtractionJobRow, number>('extractionJobs')
/** The spend table of a store. */
export const spendTable = (ctx: StoreContext): Table<ExtractionSpendRow, [string, string]> =>
  ctx.db.table<ExtractionSpendRow, [string, string]>('extractionSpend')

/** The UTC day of a time, as the spend table keys it. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** The start of the UTC day after `ms`. */
export function nextUtcDay(ms: number): number {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
}

/**
 * Queues the extraction of an ended turn inside the caller's write (the one that records the
 * reply), so the turn and its job commit together. Returns the job id.
 */
export async function enqueueTurn(
  ctx: StoreContext,
  turn: { projectId: string; sessionId: string; turnId: string; prompt: string; reply: string; messageIds: string[] },
): Promise<number> {
  const now = ctx.now()
  return jobsTable(ctx).add({
    kind: 'extract',
    ...turn,
    tokens: ctx.tokenizer.count(turn.prompt) + ctx.tokenizer.count(turn.reply),
    status: 'pending',
    attempts: 0,
    nextAt: now,
    createdAt: now,
  })
}
