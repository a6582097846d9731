import { Dexie } from 'dexie'
import { invalidInput, MemoryError } from './errors.js'
import { compareHlc } from './hlc.js'
import { newId } from './ids.js'
import { requireProject } from './projects.js'
import type { SummaryRow } from './schema.js'
import type { StoreContext } from './store-context.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from './paging.js'
import { checkId, checkOneOf, checkOptions, checkString, checkTime } from './validate.js'
import { type WriteScope, read, readOne, write } from './write.js'

/** A session or project summary. `coversUntil`: epoch ms of the newest memory it covers. */
export interface Summary {
  id: string
  projectId: string
  sessionId?: string
  kind: 'session' | 'project'
  text: string
  coversUntil?: number
  createdAt: number
}

/** What {@link SummariesApi.create} takes. */
export interface SummaryInput {
  sessionId?: string
  kind: 'session' | 'project'
  text: string
  coversUntil?: number
}
/** Options of {@link SummariesApi.list}. */
export interface ListSummariesOptions extends PageOptions {
  kind?: 'session' | 'project'
}

/** Summaries of sessions and projects. */
export interface SummariesApi {
  /**
   * Stores a summary. Kind `session` needs the `sessionId` of a session of that project.
   * @throws MemoryError `not_found` for an unknown or archived project or an unknown session (or one of
   * another project), `invalid_input` on bad fields, `limit_exceeded` for text over {@link MAX_SUMMARY_LENGTH}.
   */
  create(projectId: string, summary: SummaryInput): Promise<Summary>
  /** The newest summary of a project (optionally of one session and/or kind). @throws MemoryError `invalid_input`. */
  latest(projectId: string, options?: { sessionId?: string; kind?: 'session' | 'project' }): Promise<Summary | undefined>
  /** Summaries of a project, newest first, one page. @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: ListSummariesOptions): Promise<Page<Summary>>
}

/** Longest summary text, in characters. */
export const MAX_SUMMARY_LENGTH = 100_000
const KINDS = ['session', 'project'] as const

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

/** Creates the summaries namespace of a store. */
export function createSummaries(ctx: StoreContext): SummariesApi {
  const { db } = ctx
  const tables = ['projects', 'sessions', ...summaryTables(ctx)]

  return {
    async create(projectId, summary) {
      checkId('projectId', projectId)
      const s = checkOptions('summary', summary, ['sessionId', 'kind', 'text', 'coversUntil'])
      const kind = checkOneOf('kind', s.kind, KINDS)
      checkString('text', s.text, { nonEmpty: true, maxLength: MAX_SUMMARY_LENGTH })
      if (s.sessionId !== undefined) checkId('sessionId', s.sessionId)
      else if (kind === 'session') throw invalidInput('A summary of kind "session" needs a sessionId')
      if (s.coversUntil !== undefined) checkTime('coversUntil', s.coversUntil)
      const input = { ...s, projectId } as SummaryInput & { projectId: string }
      const row = await write(ctx, tables, async (w) => {
        await requireProject(ctx, input.projectId)
        if (input.sessionId !== undefined) {
          const session = await db.sessions.get(input.sessionId)
          if (!session || session.projectId !== input.projectId) {
            throw new MemoryError('not_found', `No session ${JSON.stringify(input.sessionId)} in project ${JSON.stringify(input.projectId)}`)
          }
        }
        return storeSummary(ctx, w, input)
      })
      return toSummary(row)
    },

    async latest(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['sessionId', 'kind'])
      const kind = o.kind === undefined ? undefined : checkOneOf('kind', o.kind, KINDS)
      if (o.sessionId !== undefined) checkId('sessionId', o.sessionId)
      const row = await read(ctx, ['summaries'], () => {
        const c =
          o.sessionId !== undefined
            ? db.summaries.where('[sessionId+createdAt]').between([o.sessionId, Dexie.minKey], [o.sessionId, Dexie.maxKey])
            : byKind(projectId, kind)
        return c
          .reverse()
          .filter((r) => r.deletedAt === undefined && r.projectId === projectId && (kind === undefined || r.kind === kind))
          .first()
      })
      return row && toSummary(row)
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkPageOptions(options, ['kind'])
      const kind = o.kind === undefined ? undefined : checkOneOf('kind', o.kind, KINDS)
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      const rows = await read(ctx, ['summaries'], () =>
        byKind(projectId, kind)
          .reverse()
          .filter((r) => r.deletedAt === undefined && isAfterDescending(r.createdAt, r.id, cursor))
          .limit(o.limit + 1)
          .toArray(),
      )
      return pageFrom(rows.map(toSummary), o.limit, (r) => encodeCursor(r.createdAt, r.id))
    },
  }

  function byKind(projectId: string, kind: 'session' | 'project' | undefined) {
    return kind === undefined
      ? db.summaries.where('[projectId+createdAt]').between([projectId, Dexie.minKey], [projectId, Dexie.maxKey])
      : db.summaries.where('[projectId+kind+createdAt]').between([projectId, kind, Dexie.minKey], [projectId, kind, Dexie.maxKey])
  }
}
