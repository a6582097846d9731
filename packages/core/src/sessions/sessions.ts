import { MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import { requireProject } from '../projects/projects.js'
import type { SessionRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkOneOf, checkOptionalString, checkOptions, checkTime } from '../store/validate.js'
import { resolvePerson } from '../people/person-links.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { read, readOne, write } from '../store/write.js'
import { MAX_TITLE_LENGTH, MAX_CHANNEL_LENGTH, toSession, requireSession, assertActive } from './session-rows.js'

/** A conversation session. */
export interface Session {
  id: string
  projectId: string
  title?: string
  channel?: string
  status: 'active' | 'closed'
  summary?: string
  startedAt: number
  lastActiveAt: number
  closedAt?: number
  /** Who the session is with: a canonical person id (`memory.people`), resolved when the session was created. */
  personId?: string
}
/** Options of {@link SessionsApi.list}. */
export interface ListSessionsOptions extends PageOptions {
  status?: 'active' | 'closed'
  since?: number
  until?: number
}
/** What {@link SessionsApi.create} takes. */
export interface CreateSessionOptions {
  title?: string
  channel?: string
  id?: string
  /** Who the session is with; stored as the canonical id it resolves to (`memory.people.resolve`). */
  personId?: string
}

/** Conversation sessions. */
export interface SessionsApi {
  /**
   * Creates an active session in a project.
   * @throws MemoryError `not_found` for an unknown or archived project, `conflict` when `id` is taken,
   * `invalid_input` on a bad id, `limit_exceeded` for a title or channel that is too long.
   */
  create(projectId: string, options?: CreateSessionOptions): Promise<Session>
  /** The session, or `undefined`. @throws MemoryError `invalid_input` on a bad id. */
  get(id: string): Promise<Session | undefined>
  /**
   * Sessions of a project, newest activity first; `since` ≤ lastActiveAt < `until`; one page.
   * @throws MemoryError `invalid_input` on bad options.
   */
  list(projectId: string, options?: ListSessionsOptions): Promise<Page<Session>>
  /**
   * Closes a session. With `summary`, also stores it on the session and writes a
   * `session` summary (coversUntil = lastActiveAt) in the same transaction.
   * @returns true if the session was active; closing a closed session changes nothing.
   * @throws MemoryError `not_found` for an unknown session, `limit_exceeded` for a summary that is too long.
   */
  close(id: string, options?: { summary?: string }): Promise<boolean>
  /**
   * Reopens a closed session so messages can be appended again; its summary stays.
   * @returns true if the session was closed.
   * @throws MemoryError `not_found` for an unknown session.
   */
  reopen(id: string): Promise<boolean>
  /** Active sessions of every project with no activity for more than `olderThanMs`, most idle first. @throws MemoryError `invalid_input`. */
  idle(olderThanMs: number): Promise<Session[]>
  /**
   * Deletes a session and every message of it (their search-index entries too). In a project
   * whose conversations sync, a content-free tombstone stays and the purge reaches every device;
   * the session's summaries, journal, runs and usage are kept.
   * @returns how many messages were removed.
   * @throws MemoryError `not_found` for an unknown session, `invalid_input` on a bad id.
   */
  purge(id: string): Promise<number>
}

/** Creates the sessions namespace of a store. */
export function createSessions(ctx: StoreContext): SessionsApi {
  const { db } = ctx
  // Closing, reopening, finding idle and purging sessions load on the first of them (a chat appends far more often).
  const lifecycle = loadOnUse('session lifecycle', async () => (await import('./session-lifecycle.js')).createSessionLifecycle(ctx))

  return {
    async create(projectId, options) {
      checkId('projectId', projectId)
      const { title, channel, id, personId } = checkOptions('options', options, ['title', 'channel', 'id', 'personId'])
      if (personId !== undefined) checkId('personId', personId)
      checkOptionalString('title', title, MAX_TITLE_LENGTH)
      checkOptionalString('channel', channel, MAX_CHANNEL_LENGTH)
      const sessionId = id === undefined ? newId(ctx.now()) : checkId('id', id)
      return write(ctx, ['projects', 'sessions', 'people'], async (w) => {
        await requireProject(ctx, projectId)
        if (await db.sessions.get(sessionId)) throw new MemoryError('conflict', `A session with id ${JSON.stringify(sessionId)} already exists`)
        const now = ctx.now()
        const row: SessionRow = { id: sessionId, projectId, status: 'active', startedAt: now, lastActiveAt: now, lastSeq: 0, hlc: w.hlc() }
        if (title !== undefined) row.title = title
        if (channel !== undefined) row.channel = channel
        if (personId !== undefined) row.personId = await resolvePerson(ctx, personId)
        await db.sessions.add(row)
        w.change('sessions', 'put', sessionId, projectId)
        return toSession(row)
      })
    },

    async get(id) {
      checkId('id', id)
      const row = await readOne(ctx, () => db.sessions.get(id))
      return row && !row.purged ? toSession(row) : undefined
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkPageOptions(options, ['status', 'since', 'until'])
      const status = o.status === undefined ? undefined : checkOneOf('status', o.status, ['active', 'closed'] as const)
      const since = o.since === undefined ? -Infinity : checkTime('since', o.since)
      const until = o.until === undefined ? Infinity : checkTime('until', o.until)
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      if (since >= until) return { items: [] }
      const rows = await read(ctx, ['sessions'], () => {
        // Reverse index order: lastActiveAt descending, ties by id descending.
        const open = cursor === undefined || cursor.at >= until
        return db.sessions
          .where('[projectId+lastActiveAt]')
          .between([projectId, since], [projectId, open ? until : cursor.at], true, !open)
          .reverse()
          .filter((s) => !s.purged && (status === undefined || s.status === status) && isAfterDescending(s.lastActiveAt, s.id, cursor))
          .limit(o.limit + 1)
          .toArray()
      })
      return pageFrom(rows.map(toSession), o.limit, (s) => encodeCursor(s.lastActiveAt, s.id))
    },

    ...methodsOnUse(lifecycle, ['close', 'reopen', 'idle', 'purge']),
  }
}

export { MAX_TITLE_LENGTH, MAX_CHANNEL_LENGTH, toSession, requireSession, assertActive }
