import type { Table } from 'dexie'
import { invalidInput, MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import { requireProject } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterAscending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkNumber, checkOneOf, checkOptionalNumber, checkOptions, checkString, checkTime } from '../store/validate.js'
import { read, write, type WriteScope } from '../store/write.js'
import { dayOfMonth, nextOccurrenceAfter, retryDelay, type Repeat } from './task-schedule.js'
import { normaliseText } from './normalise-text.js'
import { normaliseHandle, randomHandle } from './task-handle.js'
import { NEAR_DUPLICATE_WINDOW_MS, similarity, SIMILARITY_THRESHOLD } from './task-similarity.js'

export type { Repeat } from './task-schedule.js'

/** A scheduled task. */
export interface Task {
  /** A short handle a person can type ("k3f9q"), unique in the store; `cancel` and `update` match its prefix too. */
  handle: string
  id: string
  projectId: string
  description: string
  dueAt: number
  repeat: Repeat
  kind?: string
  status: 'pending' | 'done' | 'failed' | 'cancelled'
  retries: number
  lastError?: string
  createdAt: number
}
/**
 * A stored task: `norm` is the normalised description, `slotAt` the scheduled occurrence
 * (retries and `defer` move `dueAt`, not the schedule), `anchorDay` the monthly day of month.
 */
interface TaskRow extends Task {
  norm: string
  slotAt: number
  anchorDay: number
}

const STATUSES = ['pending', 'done', 'failed', 'cancelled'] as const
const REPEATS = ['daily', 'weekly', 'monthly'] as const
const MAX_DESCRIPTION = 10_000
const MAX_ERROR = 10_000
const TABLES = ['tasks', 'projects']

/** What {@link TasksApi.create} takes. */
export interface TaskInput {
  description: string
  dueAt: number
  repeat?: Repeat
  kind?: string
}
/** Options of {@link TasksApi.list}. */
export interface ListTasksOptions extends PageOptions {
  projectId?: string
  status?: Task['status']
}

/** Scheduled tasks of projects. */
export interface TasksApi {
  /**
   * Creates a pending task, unless the project already has a pending task with the same
   * normalised description and due time (exact duplicate) or a similar description due
   * within 30 minutes (near duplicate): then that task is returned and nothing is written.
   * @throws MemoryError `invalid_input`, `not_found` (unknown or archived project).
   */
  create(projectId: string, task: TaskInput): Promise<Task>
  /** Pending tasks due at or before `now` (default: the store's clock), earliest first. @throws MemoryError `invalid_input`. */
  due(now?: number): Promise<Task[]>
  /**
   * Completes a pending task: a one-shot task becomes `done`; a repeating one moves to its
   * next scheduled occurrence after now (missed ones skipped; retry and defer delays do not
   * shift the schedule), with retries reset.
   * @throws MemoryError `not_found` (no such id), `conflict` (not pending).
   */
  complete(id: string): Promise<Task>
  /**
   * Records a failure. Under `maxRetries` retries the task stays pending and is due again
   * after a backoff (1 min, 2, 4, … capped at 1 h; `backoffMs` sets the base); after that it
   * ends as `failed`. @throws MemoryError `not_found`, `conflict` (not pending), `invalid_input`.
   */
  fail(id: string, error: string, options: { maxRetries: number; backoffMs?: number }): Promise<{ retrying: boolean }>
  /**
   * Cancels the pending task whose handle or id starts with `idPrefix`; false when none does.
   * A handle prefix is read leniently (any case, a leading `#`, `i`/`l` as `1`, `o` as `0`).
   * @example await memory.tasks.cancel('k3f') // the pending task whose handle is k3f…
   * @throws MemoryError `conflict` when the prefix matches several pending tasks.
   */
  cancel(idPrefix: string): Promise<boolean>
  /**
   * Changes the pending task whose handle or id starts with `idPrefix` (read as in `cancel`); false when none does.
   * @throws MemoryError `conflict` (ambiguous prefix), `invalid_input`.
   */
  update(idPrefix: string, changes: { description?: string; dueAt?: number; repeat?: Repeat }): Promise<boolean>
  /** Moves a pending task's due time (this occurrence only; `update` with `dueAt` changes the schedule). @throws MemoryError `not_found`, `conflict` (not pending), `invalid_input`. */
  defer(id: string, dueAt: number): Promise<void>
  /** Tasks by due time, optionally of one project and/or status. @throws MemoryError `invalid_input`. */
  list(options?: ListTasksOptions): Promise<Page<Task>>
}

/** Creates the tasks namespace of a store. */
export function createTasks(ctx: StoreContext): TasksApi {
  const tasks = (): Table<TaskRow, string> => ctx.db.table<TaskRow, string>('tasks')

  async function save(w: WriteScope, row: TaskRow): Promise<Task> {
    await tasks().put(row)
    w.change('tasks', 'put', row.id, row.projectId)
    return toTask(row)
  }

  async function pendingById(id: string): Promise<TaskRow> {
    const row = await tasks().get(id)
    if (!row) throw new MemoryError('not_found', `No task with id ${JSON.stringify(id)}`)
    if (row.status !== 'pending') throw new MemoryError('conflict', `Task ${id} is ${row.status}, not pending`)
    return row
  }

  /** A handle no task has, checked in the caller's transaction. */
  async function uniqueHandle(): Promise<string> {
    for (let i = 0; i < 100; i++) {
      const handle = randomHandle()
      if ((await tasks().where('handle').equals(handle).count()) === 0) return handle
    }
    throw new MemoryError('internal', 'No free task handle after 100 tries')
  }

  /** The one pending task whose handle or id starts with `prefix`; undefined when none. */
  async function pendingByPrefix(prefix: string): Promise<TaskRow | undefined> {
    const pending = (t: TaskRow) => t.status === 'pending'
    const handle = normaliseHandle(prefix)
    const byId = await tasks().where('id').startsWith(prefix).filter(pending).limit(2).toArray()
    const byHandle = handle === undefined ? [] : await tasks().where('handle').startsWith(handle).filter(pending).limit(2).toArray()
    const matches = [...new Map([...byId, ...byHandle].map((t) => [t.id, t])).values()]
    if (matches.length > 1) throw new MemoryError('conflict', `Task id prefix ${JSON.stringify(prefix)} matches several pending tasks; give more characters`)
    return matches[0]
  }

  return {
    async create(projectId, task) {
      checkId('projectId', projectId)
      const t = checkOptions('task', task, ['description', 'dueAt', 'repeat', 'kind'])
      const description = checkString('description', t.description, { nonEmpty: true, maxLength: MAX_DESCRIPTION }).trim()
      const dueAt = checkTime('dueAt', t.dueAt)
      const repeat = checkRepeat(t.repeat)
      const kind = t.kind === undefined ? undefined : checkId('kind', t.kind)
      const norm = normaliseText(description)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const pending = await tasks().where('[projectId+status]').equals([projectId, 'pending']).toArray()
        const exact = pending.find((p) => p.norm === norm && p.dueAt === dueAt)
        const near = exact ?? pending.find((p) => Math.abs(p.dueAt - dueAt) <= NEAR_DUPLICATE_WINDOW_MS && similarity(p.norm, norm) >= SIMILARITY_THRESHOLD)
        if (near) return toTask(near)
        const row: TaskRow = {
          handle: await uniqueHandle(),
          id: newId(ctx.now()),
          projectId,
          description,
          dueAt,
          repeat,
          status: 'pending',
          retries: 0,
          createdAt: ctx.now(),
          norm,
          slotAt: dueAt,
          anchorDay: dayOfMonth(dueAt),
        }
        if (kind !== undefined) row.kind = kind
        return save(w, row)
      })
    },

    async due(now) {
      const at = now === undefined ? ctx.now() : checkTime('now', now)
      return read(ctx, TABLES, async () => {
        const rows = await tasks().where('[status+dueAt]').between(['pending', -Infinity], ['pending', at], true, true).toArray()
        return rows.map(toTask)
      })
    },

    async complete(id) {
      checkId('id', id)
      return write(ctx, TABLES, async (w) => {
        const row = await pendingById(id)
        if (row.repeat === null) return save(w, { ...row, status: 'done' })
        const slotAt = nextOccurrenceAfter(row.slotAt, row.repeat, row.anchorDay, ctx.now())
        const next: TaskRow = { ...row, dueAt: slotAt, slotAt, retries: 0 }
        delete next.lastError
        return save(w, next)
      })
    },

    async fail(id, error, options) {
      checkId('id', id)
      const message = checkString('error', error, { maxLength: MAX_ERROR })
      const o = checkOptions('options', options, ['maxRetries', 'backoffMs'])
      const maxRetries = checkNumber('maxRetries', o.maxRetries, { min: 0, integer: true })
      const backoffMs = checkOptionalNumber('backoffMs', o.backoffMs, { min: 0 })
      return write(ctx, TABLES, async (w) => {
        const row = await pendingById(id)
        const retries = row.retries + 1
        if (retries > maxRetries) {
          await save(w, { ...row, status: 'failed', lastError: message })
          return { retrying: false }
        }
        await save(w, { ...row, retries, lastError: message, dueAt: ctx.now() + retryDelay(retries, backoffMs) })
        return { retrying: true }
      })
    },

    async cancel(idPrefix) {
      checkId('idPrefix', idPrefix)
      return write(ctx, TABLES, async (w) => {
        const row = await pendingByPrefix(idPrefix)
        if (!row) return false
        await save(w, { ...row, status: 'cancelled' })
        return true
      })
    },

    async update(idPrefix, changes) {
      checkId('idPrefix', idPrefix)
      const c = checkOptions('changes', changes, ['description', 'dueAt', 'repeat'])
      const description =
        c.description === undefined ? undefined : checkString('description', c.description, { nonEmpty: true, maxLength: MAX_DESCRIPTION }).trim()
      const dueAt = c.dueAt === undefined ? undefined : checkTime('dueAt', c.dueAt)
      const repeat = c.repeat === undefined ? undefined : checkRepeat(c.repeat)
      return write(ctx, TABLES, async (w) => {
        const row = await pendingByPrefix(idPrefix)
        if (!row) return false
        const next = { ...row }
        if (description !== undefined) Object.assign(next, { description, norm: normaliseText(description) })
        if (dueAt !== undefined) Object.assign(next, { dueAt, slotAt: dueAt, anchorDay: dayOfMonth(dueAt) })
        if (repeat !== undefined) next.repeat = repeat
        await save(w, next)
        return true
      })
    },

    async defer(id, dueAt) {
      checkId('id', id)
      const at = checkTime('dueAt', dueAt)
      await write(ctx, TABLES, async (w) => {
        const row = await pendingById(id)
        await save(w, { ...row, dueAt: at })
      })
    },

    async list(options) {
      const o = checkPageOptions(options, ['projectId', 'status'])
      const projectId = o.projectId === undefined ? undefined : checkId('projectId', o.projectId)
      const status = o.status === undefined ? undefined : checkOneOf('status', o.status, STATUSES)
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      const rows = await read(ctx, TABLES, async () => {
        const rows =
          projectId === undefined
            ? status === undefined
              ? await tasks().toArray()
              : await tasks().where('[status+dueAt]').between([status, -Infinity], [status, Infinity]).toArray()
            : status === undefined
              ? await tasks().where('projectId').equals(projectId).toArray()
              : await tasks().where('[projectId+status]').equals([projectId, status]).toArray()
        return rows.sort((a, b) => a.dueAt - b.dueAt || (a.id < b.id ? -1 : 1))
      })
      const after = rows
        .filter((r) => isAfterAscending(r.dueAt, r.id, cursor))
        .slice(0, o.limit + 1)
        .map(toTask)
      return pageFrom(after, o.limit, (t) => encodeCursor(t.dueAt, t.id))
    },
  }
}

function checkRepeat(value: unknown): Repeat {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw invalidInput(`repeat must be 'daily', 'weekly', 'monthly' or null`)
  return checkOneOf('repeat', value, REPEATS)
}

function toTask(row: TaskRow): Task {
  const { norm: _norm, slotAt: _slot, anchorDay: _anchor, ...task } = row
  return task
}
