import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { requireProject } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkOneOf, checkOptions, checkString, checkTime } from '../store/validate.js'
import { MAX_SUMMARY_LENGTH, storeSummary, summaryTables, toSummary } from './summary-rows.js'
import { read, write } from '../store/write.js'

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

const KINDS = ['session', 'project'] as const

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
            ? db.summaries.where('[sessionId+createdAt]').between([o.sessionId, Dexie.minKey], [o.sessionId, maxKey()])
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
      ? db.summaries.where('[projectId+createdAt]').between([projectId, Dexie.minKey], [projectId, maxKey()])
      : db.summaries.where('[projectId+kind+createdAt]').between([projectId, kind, Dexie.minKey], [projectId, kind, maxKey()])
  }
}
