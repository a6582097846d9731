import { Dexie, type Table } from 'dexie'
import { maxKey } from '../store/keys.js'
import type { StoreContext } from '../store/store-context.js'
import { DEFAULT_PAGE_SIZE, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import {
  checkId,
  checkJson,
  checkLimit,
  checkNumber,
  checkOptionalNumber,
  checkOptionalString,
  checkOptions,
  checkString,
  type Json,
} from '../store/validate.js'
import { read, readOne, write } from '../store/write.js'

/** A phase checkpoint of a run. */
export interface Checkpoint {
  runId: string
  phase: string
  status: string
  output?: Json
  error?: string
  attempt: number
  createdAt: number
  updatedAt: number
}
/** A tool call made during a run. */
export interface ToolEvent {
  runId: string
  seq: number
  tool: string
  input?: Json
  output?: Json
  status: string
  durationMs?: number
  at: number
}
/** A run's status and summary. */
export interface Run {
  runId: string
  status: string
  summary?: string
  updatedAt: number
}

/** A stored checkpoint; `order` keeps creation order when clocks tie. */
interface CheckpointRow extends Checkpoint {
  order: number
}

const MAX_STATUS = 100
const MAX_ERROR = 10_000
const MAX_SUMMARY = 100_000
const TABLES = ['runs', 'checkpoints', 'toolEvents']

/** What {@link RunsApi.setCheckpoint} takes. */
export interface CheckpointInput {
  status: string
  output?: Json
  error?: string
  attempt?: number
}
/** What {@link RunsApi.appendToolEvent} takes. */
export interface ToolEventInput {
  tool: string
  input?: Json
  output?: Json
  status: string
  durationMs?: number
}

/** Runs: phase checkpoints, tool events, status. Run ids are any string; no project is needed. */
export interface RunsApi {
  /**
   * Upserts the checkpoint of `phase`: the state given replaces status, output and error
   * (omitted ones are removed); `attempt` defaults to the previous attempt, or 1. Calling it
   * again with the same state is idempotent; the phase keeps its place in creation order.
   * @throws MemoryError `invalid_input`, `limit_exceeded` (output over 1 MiB as JSON).
   */
  setCheckpoint(runId: string, phase: string, state: CheckpointInput): Promise<Checkpoint>
  /** The run's checkpoints in creation order. @throws MemoryError `invalid_input`. */
  checkpoints(runId: string): Promise<Checkpoint[]>
  /** Deletes the run's checkpoints (after success); tool events and status stay. Returns how many. @throws MemoryError `invalid_input`. */
  deleteCheckpoints(runId: string): Promise<number>
  /** Appends a tool event with the run's next seq (1, 2, …). @throws MemoryError `invalid_input`, `limit_exceeded`. */
  appendToolEvent(runId: string, event: ToolEventInput): Promise<ToolEvent>
  /** The run's tool events in order, one page (cursor: the last seq). @throws MemoryError `invalid_input`. */
  toolEvents(runId: string, options?: PageOptions<number>): Promise<Page<ToolEvent, number>>
  /** Sets the run's status; `summary` replaces the old one when given, else the old one stays. @throws MemoryError `invalid_input`. */
  setStatus(runId: string, state: { status: string; summary?: string }): Promise<Run>
  /** The run's status, or undefined before the first `setStatus`. @throws MemoryError `invalid_input`. */
  get(runId: string): Promise<Run | undefined>
}

/** Creates the runs namespace of a store. */
export function createRuns(ctx: StoreContext): RunsApi {
  const runs = (): Table<Run, string> => ctx.db.table<Run, string>('runs')
  const checkpoints = (): Table<CheckpointRow, [string, string]> => ctx.db.table<CheckpointRow, [string, string]>('checkpoints')
  const toolEvents = (): Table<ToolEvent, [string, number]> => ctx.db.table<ToolEvent, [string, number]>('toolEvents')
  const ofRun = (runId: string) =>
    [
      [runId, Dexie.minKey],
      [runId, maxKey()],
    ] as const

  return {
    async setCheckpoint(runId, phase, state) {
      checkId('runId', runId)
      checkId('phase', phase)
      const s = checkOptions('state', state, ['status', 'output', 'error', 'attempt'])
      const status = checkString('status', s.status, { nonEmpty: true, maxLength: MAX_STATUS })
      if (s.output !== undefined) checkJson('output', s.output)
      const error = checkOptionalString('error', s.error, MAX_ERROR)
      const attempt = checkOptionalNumber('attempt', s.attempt, { min: 0, integer: true })
      return write(ctx, TABLES, async (w) => {
        const now = ctx.now()
        const existing = await checkpoints().get([runId, phase])
        let order = existing?.order
        if (order === undefined) {
          const last = await checkpoints()
            .where('[runId+order]')
            .between(...ofRun(runId))
            .last()
          order = (last?.order ?? 0) + 1
        }
        const row: CheckpointRow = {
          runId,
          phase,
          status,
          attempt: attempt ?? existing?.attempt ?? 1,
          createdAt: existing?.createdAt ?? now,
          updatedAt: now,
          order,
        }
        if (s.output !== undefined) row.output = s.output
        if (error !== undefined) row.error = error
        await checkpoints().put(row)
        w.change('runs', 'put', runId, '')
        return toCheckpoint(row)
      })
    },

    async checkpoints(runId) {
      checkId('runId', runId)
      return read(ctx, TABLES, async () =>
        (
          await checkpoints()
            .where('[runId+order]')
            .between(...ofRun(runId))
            .toArray()
        ).map(toCheckpoint),
      )
    },

    async deleteCheckpoints(runId) {
      checkId('runId', runId)
      return write(ctx, TABLES, async (w) => {
        const n = await checkpoints()
          .where('[runId+order]')
          .between(...ofRun(runId))
          .delete()
        if (n > 0) w.change('runs', 'delete', runId, '')
        return n
      })
    },

    async appendToolEvent(runId, event) {
      checkId('runId', runId)
      const e = checkOptions('event', event, ['tool', 'input', 'output', 'status', 'durationMs'])
      const tool = checkId('tool', e.tool)
      const status = checkString('status', e.status, { nonEmpty: true, maxLength: MAX_STATUS })
      if (e.input !== undefined) checkJson('input', e.input)
      if (e.output !== undefined) checkJson('output', e.output)
      const durationMs = checkOptionalNumber('durationMs', e.durationMs, { min: 0 })
      return write(ctx, TABLES, async (w) => {
        const last = await toolEvents()
          .where('[runId+seq]')
          .between(...ofRun(runId))
          .last()
        const row: ToolEvent = { runId, seq: (last?.seq ?? 0) + 1, tool, status, at: ctx.now() }
        if (e.input !== undefined) row.input = e.input
        if (e.output !== undefined) row.output = e.output
        if (durationMs !== undefined) row.durationMs = durationMs
        await toolEvents().add(row)
        w.change('runs', 'put', runId, '')
        return row
      })
    },

    async toolEvents(runId, options) {
      checkId('runId', runId)
      const o = checkOptions('options', options, ['after', 'limit'])
      const after = o.after === undefined ? 0 : checkNumber('options.after', o.after, { min: 0, integer: true })
      const limit = checkLimit('options.limit', o.limit, DEFAULT_PAGE_SIZE)
      const rows = await read(ctx, TABLES, () =>
        toolEvents()
          .where('[runId+seq]')
          .between([runId, after], [runId, maxKey()], false, true)
          .limit(limit + 1)
          .toArray(),
      )
      return pageFrom(rows, limit, (e) => e.seq)
    },

    async setStatus(runId, state) {
      checkId('runId', runId)
      const s = checkOptions('state', state, ['status', 'summary'])
      const status = checkString('status', s.status, { nonEmpty: true, maxLength: MAX_STATUS })
      const summary = checkOptionalString('summary', s.summary, MAX_SUMMARY)
      return write(ctx, TABLES, async (w) => {
        const existing = await runs().get(runId)
        const run: Run = { runId, status, updatedAt: ctx.now() }
        const keptSummary = summary ?? existing?.summary
        if (keptSummary !== undefined) run.summary = keptSummary
        await runs().put(run)
        w.change('runs', 'put', runId, '')
        return run
      })
    },

    async get(runId) {
      checkId('runId', runId)
      return readOne(ctx, () => runs().get(runId))
    },
  }
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  const { order: _order, ...checkpoint } = row
  return checkpoint
}
