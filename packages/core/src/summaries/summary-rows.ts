import { newId } from '../store/ids.js'
import type { SummaryRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import type { Summary, SummaryInput } from './summaries.js'
import type { WriteScope } from '../store/write.js'

/*
 * How a summary is stored and indexed, whoever writes it (the namespace,
 * sessions.close, sync, import). Apart from summaries.ts so that those need
 * not load the namespace.
 */

/** Longest summary text, in characters. */
export const MAX_SUMMARY_LENGTH = 100_000

/** Tables a summary write touches (the index's included): use them for {@link applyRemoteSummary}'s transaction. */
export function summaryTables(ctx: StoreContext): string[] {
  return ['summaries', ...ctx.index.tables]
}

/** The public shape of a stored summary. */
export function toSummary(row: SummaryRow): Summary {
  const { hlc: _hlc, deletedAt: _deletedAt, ...summary } = row
  return summary
}

/**
 * Writes a checked summary row in the caller's transaction (tables: summaryTables), indexes it
 * and records the change. Used by `write` and by `sessions.close`.
 */
export async function storeSummary(ctx: StoreContext, w: WriteScope, input: SummaryInput & { projectId: string }): Promise<SummaryRow> {
  const row: SummaryRow = { id: newId(ctx.now()), projectId: input.projectId, kind: input.kind, text: input.text, createdAt: ctx.now(), hlc: w.hlc() }
  if (input.sessionId !== undefined) row.sessionId = input.sessionId
  if (input.coversUntil !== undefined) row.coversUntil = input.coversUntil
  await ctx.db.summaries.add(row)
  await indexSummary(ctx, w, row)
  w.change('summaries', 'put', row.id, row.projectId)
  return row
}

/** Puts a live summary into the search index (removes a deleted one). */
export async function indexSummary(ctx: StoreContext, w: WriteScope, row: SummaryRow): Promise<void> {
  const docId = `summary:${row.id}`
  if (row.deletedAt !== undefined) return ctx.index.remove(w, docId)
  await ctx.index.put(w, {
    docId,
    kind: 'summary',
    projectId: row.projectId,
    ...(row.sessionId === undefined ? {} : { sessionId: row.sessionId }),
    text: row.text,
    createdAt: row.createdAt,
  })
}
