import type { Memory } from '../compose/memory.js'
import { MemoryError } from '../store/errors.js'
import { mapError } from '../store/map-error.js'
import type { ExtractionRejection } from '../store/status.js'
import { reportError } from '../store/report-error.js'
import type { StoreContext } from '../store/store-context.js'
import { read, write } from '../store/write.js'
import { appendEntry } from '../runtime/journal.js'
import { applyOperation, checkOperations, memoryView, prepareOperations, type Exchange, type MemoryOperation } from '../runtime/turn-extraction.js'
import { type ExtractionJobRow, jobsTable, nextUtcDay, spendTable, utcDay } from './extraction-jobs.js'
import type { BackgroundExtractor, ExtractionAnswer, ModelUsage } from './extraction-types.js'
import { observationWork, runObservationJob } from './observation-jobs.js'
import type { TurnHolds } from './turn-holds.js'

/** `memory.extraction`: the background extraction queue. */
export interface ExtractionApi {
  /**
   * Resolves once the queue has nothing left it can run now: every job applied, or set aside
   * (failed after its last attempt, or held by the daily budget; `memory.status` says which).
   * For tests, scripts, and before a dump. Resolves at once when the store has no background extractor.
   * @throws MemoryError `closed`.
   */
  flush(): Promise<{ pending: number; failed: number }>
  /** Queues the failed jobs again (their attempts start over). Returns how many. @throws MemoryError `closed`. */
  retry(): Promise<number>
  /**
   * Purges now the facts, passages and observations whose `expiresAt` has passed (the background
   * sweep does it every minute); returns how many. @throws MemoryError `closed`.
   */
  sweep(): Promise<number>
}

/** Defaults of {@link ExtractionSettings}. */
export const EXTRACTION_DEFAULTS = {
  batchTokens: 4_000,
  maxAttempts: 5,
  retryDelayMs: 1_000,
  observeTokens: 30_000,
  reflectTokens: 40_000,
  turnHoldMs: 5_000,
} as const

/** A queue's runner (one per store). */
export interface ExtractionQueue extends Omit<ExtractionApi, 'sweep'> {
  /** Looks for work (after a turn was queued, or at open). */
  kick(): void
}

/** Jobs looked at to choose the next one. */
const QUEUE_HEAD = 256

/** Operation failures that reject the one operation (the model asked for something memory refuses), not the job. */
const REJECTED = new Set(['invalid_input', 'limit_exceeded', 'not_found', 'read_only', 'conflict'])

/**
 * Creates the background queue of a store: jobs run one at a time in queue order (so each
 * project's in order), turns of a session are batched when the queue falls behind, a failing
 * job is retried with backoff, and an answer is applied in one transaction that also removes its
 * jobs — a job whose answer was applied never runs again; one that crashed before runs again.
 */
export function createExtractionQueue(ctx: StoreContext, memory: Memory, extractor: BackgroundExtractor, holds?: TurnHolds): ExtractionQueue {
  const s = { ...EXTRACTION_DEFAULTS, ...(extractor.settings ?? {}) }
  const view = memoryView(memory)
  const allTables = () => ctx.db.tables.map((t) => t.name)
  let running: Promise<void> | undefined
  let again = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false
  const held = new Map<string, number>()
  let rejection: ExtractionRejection | undefined
  ctx.onClose.push(() => {
    closed = true
    if (timer !== undefined) clearTimeout(timer)
  })
  ctx.status.enable('extractor', true)

  async function nextJob(now: number): Promise<{ job?: ExtractionJobRow; wakeAt?: number }> {
    // The head of the queue: past it, a project has waited behind its own earlier jobs anyway.
    const pending = await read(ctx, ['extractionJobs'], () =>
      jobsTable(ctx).where('[status+seq]').between(['pending', 0], ['pending', Infinity]).limit(QUEUE_HEAD).toArray(),
    )
    const blocked = new Set<string>()
    let wakeAt: number | undefined
    for (const job of pending) {
      if (blocked.has(job.projectId)) continue
      const until = held.get(job.projectId)
      if (until !== undefined && until > now) {
        blocked.add(job.projectId)
        wakeAt = Math.min(wakeAt ?? until, until)
        continue
      }
      // A project's jobs run in order: a job waiting on its backoff holds the later ones.
      if (job.nextAt > now) {
        blocked.add(job.projectId)
        wakeAt = Math.min(wakeAt ?? job.nextAt, job.nextAt)
        continue
      }
      return { job }
    }
    return wakeAt === undefined ? {} : { wakeAt }
  }

  async function publish(): Promise<{ pending: number; failed: number }> {
    const [pending, failed] = await read(ctx, ['extractionJobs'], () =>
      Promise.all([
        jobsTable(ctx).where('[status+seq]').between(['pending', 0], ['pending', Infinity]).count(),
        jobsTable(ctx).where('[status+seq]').between(['failed', 0], ['failed', Infinity]).count(),
      ]),
    )
    const now = ctx.now()
    const budget = [...held].find(([, until]) => until > now)
    ctx.status.setQueue({
      backlog: pending,
      failed,
      ...(budget ? { budget: { projectId: budget[0], until: budget[1] } } : {}),
      ...(rejection ? { rejected: rejection } : {}),
    })
    return { pending, failed }
  }

  /** Whether the project's budget for today is spent; holds the project until tomorrow when it is. */
  async function overBudget(projectId: string, now: number): Promise<boolean> {
    if (s.dailyTokenBudget === undefined) return false
    const spent = (await read(ctx, ['extractionSpend'], () => spendTable(ctx).get([projectId, utcDay(now)])))?.tokens ?? 0
    if (spent < s.dailyTokenBudget) return false
    const until = nextUtcDay(now)
    if (held.get(projectId) !== until) {
      held.set(projectId, until)
      ctx.status.fail(
        'extractor',
        new MemoryError(
          'quota_exceeded',
          `Project ${JSON.stringify(projectId)} spent ${spent} of its ${s.dailyTokenBudget} extraction tokens today; extraction resumes at ${new Date(until).toISOString()}`,
        ),
        projectId,
      )
    }
    return true
  }

  /** The pending extract jobs that run with `first`: its session's next turns, within the batch's tokens. */
  async function batchOf(first: ExtractionJobRow): Promise<ExtractionJobRow[]> {
    const later = await read(ctx, ['extractionJobs'], () =>
      jobsTable(ctx)
        .where('[status+seq]')
        .between(['pending', first.seq! + 1], ['pending', Infinity])
        .limit(QUEUE_HEAD)
        .toArray(),
    )
    const batch = [first]
    let tokens = first.tokens
    for (const job of later) {
      if (job.projectId !== first.projectId) continue
      if (job.kind !== 'extract' || job.sessionId !== first.sessionId || job.nextAt > ctx.now()) break
      if (tokens + job.tokens > s.batchTokens) break
      batch.push(job)
      tokens += job.tokens
    }
    return batch
  }

  function exchangeOf(batch: readonly ExtractionJobRow[]): Exchange {
    const last = batch[batch.length - 1]!
    const messageIds = batch.flatMap((j) => j.messageIds ?? [])
    return {
      projectId: last.projectId,
      sessionId: last.sessionId,
      turnId: last.turnId!,
      prompt: last.prompt ?? '',
      reply: last.reply ?? '',
      ...(messageIds.length > 0 ? { messageIds } : {}),
      turns: batch.map((j) => ({
        turnId: j.turnId!,
        prompt: j.prompt ?? '',
        reply: j.reply ?? '',
        ...(j.messageIds?.length ? { messageIds: j.messageIds } : {}),
      })),
    }
  }

  /** Records the usage of an answer and the project's spend, inside the caller's write. */
  async function spend(job: ExtractionJobRow, usage: readonly ModelUsage[] | undefined): Promise<void> {
    if (!usage || usage.length === 0) return
    let tokens = 0
    for (const u of usage) {
      await memory.usage.append({
        sessionId: job.sessionId,
        projectId: job.projectId,
        model: u.model,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        ...(u.cacheReadTokens === undefined ? {} : { cacheReadTokens: u.cacheReadTokens }),
        ...(u.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: u.cacheWriteTokens }),
      })
      tokens += u.inputTokens + u.outputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)
    }
    const day = utcDay(ctx.now())
    const row = await spendTable(ctx).get([job.projectId, day])
    await spendTable(ctx).put({ projectId: job.projectId, day, tokens: (row?.tokens ?? 0) + tokens })
  }

  async function runExtract(batch: ExtractionJobRow[]): Promise<void> {
    const exchange = exchangeOf(batch)
    const raw = await extractor.extract(exchange, view)
    const answer: ExtractionAnswer = Array.isArray(raw) ? { operations: raw } : (raw as ExtractionAnswer)
    if (typeof answer !== 'object' || answer === null)
      throw new MemoryError('invalid_input', 'extract() must answer { operations, usage? } or a list of operations')
    const operations = checkOperations(answer.operations)
    await prepareOperations(memory, operations)
    const last = batch[batch.length - 1]!
    await write(ctx, allTables(), async (w) => {
      // Another runner (a second tab on this database) may have applied it meanwhile: then write nothing.
      const still = await jobsTable(ctx).bulkGet(batch.map((j) => j.seq!))
      if (still.some((j) => j === undefined)) return
      const rejected: { index: number; op: string; code: string; message: string }[] = []
      let written = 0
      for (const [index, op] of operations.entries()) {
        try {
          await applyOperation(memory, op, {
            projectId: last.projectId,
            sessionId: last.sessionId,
            turnId: last.turnId!,
            messageIds: exchange.messageIds ?? [],
          })
          written++
        } catch (error) {
          const e = mapError(error)
          if (!REJECTED.has(e.code)) throw error
          rejected.push({ index, op: String(op.op), code: e.code, message: e.message })
        }
      }
      await spend(last, answer.usage)
      await jobsTable(ctx).bulkDelete(batch.map((j) => j.seq!))
      const turns = ctx.db.table('turns')
      for (const job of batch) {
        const turn = await turns.get([job.sessionId, job.turnId!])
        if (turn) await turns.put({ ...turn, written: job === last ? written : 0, updatedAt: ctx.now() })
      }
      await appendEntry(ctx, w, last.sessionId, {
        kind: 'turn.extracted',
        payload: {
          turnId: last.turnId!,
          turns: batch.map((j) => j.turnId!),
          operations: written,
          reasons: operations.map((op: MemoryOperation) => op.reason ?? null),
          ...(rejected.length > 0 ? { rejected } : {}),
        },
      })
      if (rejected.length > 0) rejection = { projectId: last.projectId, sessionId: last.sessionId, turnId: last.turnId!, at: ctx.now(), operations: rejected }
    })
  }

  async function fail(job: ExtractionJobRow, error: unknown): Promise<void> {
    const e = mapError(error)
    const attempts = job.attempts + 1
    const giveUp = attempts >= s.maxAttempts
    await write(ctx, ['extractionJobs'], async () => {
      if (!(await jobsTable(ctx).get(job.seq!))) return
      await jobsTable(ctx).put({
        ...job,
        attempts,
        status: giveUp ? 'failed' : 'pending',
        nextAt: ctx.now() + s.retryDelayMs * 2 ** (attempts - 1),
        lastError: { code: e.code, message: e.message },
      })
    })
    // An app's own error shows as it was thrown (code `internal`); storage failures as their MemoryError.
    ctx.status.fail('extractor', e.code === 'internal' ? error : e, job.projectId)
  }

  async function runOne(job: ExtractionJobRow): Promise<void> {
    const now = ctx.now()
    if (await overBudget(job.projectId, now)) return
    // A turn of the project in flight holds the job (bounded), so it reads no half-written turn.
    await holds?.whenIdle(job.projectId, s.turnHoldMs)
    if (closed) return
    try {
      if (job.kind === 'extract') await runExtract(await batchOf(job))
      else await runObservationJob(ctx, extractor, job, view, (usage) => spend(job, usage))
      ctx.status.recover('extractor')
    } catch (error) {
      if (closed) return
      await fail(job, error)
      return
    }
    if (closed) return
    // After each job, a session long enough gets an observation, and observations long enough a reflection.
    await observationWork(ctx, extractor, s, job).catch(reportError)
  }

  async function drain(): Promise<void> {
    do {
      again = false
      while (!closed) {
        const now = ctx.now()
        const { job, wakeAt } = await nextJob(now)
        await publish()
        if (!job) {
          if (wakeAt !== undefined) schedule(wakeAt - now)
          break
        }
        await runOne(job)
      }
    } while (again && !closed)
    if (!closed) await publish()
  }

  function schedule(delay: number): void {
    if (timer !== undefined) clearTimeout(timer)
    timer = setTimeout(
      () => {
        timer = undefined
        kick()
      },
      Math.max(0, Math.min(delay, 2 ** 31 - 1)),
    )
  }

  function kick(): void {
    if (closed) return
    if (running) {
      again = true
      return
    }
    running = drain()
      .catch((error: unknown) => {
        if (!closed) reportError(error)
      })
      .finally(() => {
        running = undefined
        // A kick (a retry's timer, a new job) that came after the drain's last look would be lost.
        if (again) {
          again = false
          kick()
        }
      })
  }

  return {
    kick,
    async flush() {
      ctx.assertOpen()
      for (;;) {
        kick()
        // A drain that ends with a kick starts the next before its waiters resume: wait for the last.
        while (running) await running
        const now = ctx.now()
        const { job } = await nextJob(now)
        if (!job || closed) break
      }
      ctx.assertOpen()
      const pending = await read(ctx, ['extractionJobs'], () => jobsTable(ctx).where('[status+seq]').between(['pending', 0], ['pending', Infinity]).count())
      const failed = await read(ctx, ['extractionJobs'], () => jobsTable(ctx).where('[status+seq]').between(['failed', 0], ['failed', Infinity]).count())
      return { pending, failed }
    },
    async retry() {
      const n = await write(ctx, ['extractionJobs'], async () =>
        jobsTable(ctx)
          .where('[status+seq]')
          .between(['failed', 0], ['failed', Infinity])
          .modify((job) => {
            job.status = 'pending'
            job.attempts = 0
            job.nextAt = ctx.now()
          }),
      )
      kick()
      return n
    },
  }
}
