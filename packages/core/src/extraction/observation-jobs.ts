import { invalidInput, MemoryError } from '../store/errors.js'
import { maxKey } from '../store/keys.js'
import type { MessageRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { read, write } from '../store/write.js'
import type { MemoryView } from '../runtime/turn-extraction.js'
import { activeObservations, observedThrough, writeObservations, type ObservationWrite } from '../observations/observation-writes.js'
import { type ExtractionJobRow, jobsTable } from './extraction-jobs.js'
import type { BackgroundExtractor, ExtractionSettings, ModelUsage, ObservationAnswer, ObservationDraft } from './extraction-types.js'

type Settings = Required<Pick<ExtractionSettings, 'observeTokens' | 'reflectTokens'>>

/** Share of the observation threshold left unobserved, so the newest messages stay raw in context. */
const RAW_TAIL = 0.25
/** Most observations one answer may write. */
const MAX_OBSERVATIONS = 200
const PRIORITIES = new Set(['high', 'medium', 'low'])

/** The session's messages after the last observed one, oldest first. */
async function unobserved(ctx: StoreContext, sessionId: string): Promise<MessageRow[]> {
  return read(ctx, ['messages', 'observations'], async () => {
    const through = await observedThrough(ctx, sessionId)
    const rows = await ctx.db.messages
      .where('[sessionId+seq]')
      .between([sessionId, through + 1], [sessionId, maxKey()])
      .toArray()
    return rows.filter((m) => m.deletedAt === undefined)
  })
}

/** The messages one observation covers: the oldest, leaving a raw tail of about a quarter of the threshold. */
function toObserve(messages: readonly MessageRow[], observeTokens: number): MessageRow[] {
  let tail = 0
  let cut = messages.length
  while (cut > 1 && tail + messages[cut - 1]!.tokens <= observeTokens * RAW_TAIL) tail += messages[--cut]!.tokens
  return messages.slice(0, cut)
}

/**
 * Queues an observation of a session whose unobserved messages passed the threshold, and a
 * reflection of its observations once they passed theirs: each at most once in the queue. Not a
 * reflection right after one (`after`), which would repeat while its answer is still over the threshold.
 */
export async function observationWork(ctx: StoreContext, extractor: BackgroundExtractor, s: Settings, after: ExtractionJobRow): Promise<void> {
  const { projectId, sessionId } = after
  if (!extractor.observe || s.observeTokens <= 0) return
  const [observing, reflecting] = await read(ctx, ['extractionJobs'], () =>
    Promise.all((['observe', 'reflect'] as const).map((kind) => jobsTable(ctx).where('[sessionId+kind]').equals([sessionId, kind]).count())),
  )
  const due: { kind: 'observe' | 'reflect'; tokens: number }[] = []
  if (observing === 0) {
    const tokens = (await unobserved(ctx, sessionId)).reduce((n, m) => n + m.tokens, 0)
    if (tokens >= s.observeTokens) due.push({ kind: 'observe', tokens })
  }
  if (reflecting === 0 && extractor.reflect && after.kind !== 'reflect') {
    const observations = await read(ctx, ['observations'], () => activeObservations(ctx, sessionId, ctx.now()))
    const tokens = observations.reduce((n, o) => n + ctx.tokenizer.count(o.text), 0)
    if (tokens >= s.reflectTokens) due.push({ kind: 'reflect', tokens })
  }
  if (due.length === 0) return
  const now = ctx.now()
  await write(ctx, ['extractionJobs'], () =>
    jobsTable(ctx).bulkAdd(
      due.map(({ kind, tokens }) => ({ kind, projectId, sessionId, tokens, status: 'pending' as const, attempts: 0, nextAt: now, createdAt: now })),
    ),
  )
}

function checkDrafts(answer: ObservationAnswer, what: string): ObservationDraft[] {
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.observations))
    throw invalidInput(`${what}() must answer { observations: [{ text, priority }], usage? }`)
  if (answer.observations.length > MAX_OBSERVATIONS)
    throw invalidInput(`${what}() answered ${answer.observations.length} observations, more than ${MAX_OBSERVATIONS}`)
  return answer.observations.map((o, i) => {
    if (typeof o?.text !== 'string' || o.text.trim() === '') throw invalidInput(`observation ${i} needs a text`)
    if (!PRIORITIES.has(o.priority)) throw invalidInput(`observation ${i} has priority ${JSON.stringify(o.priority)}; use high, medium or low`)
    return o
  })
}

/** Runs an `observe` or `reflect` job: the model call outside any transaction, then its observations in one. */
export async function runObservationJob(
  ctx: StoreContext,
  extractor: BackgroundExtractor,
  job: ExtractionJobRow,
  view: MemoryView,
  spend: (usage: readonly ModelUsage[] | undefined) => Promise<void>,
): Promise<void> {
  const settings = { observeTokens: 30_000, ...(extractor.settings ?? {}) }
  let plan: ObservationWrite
  let usage: readonly ModelUsage[] | undefined
  if (job.kind === 'observe') {
    if (!extractor.observe) throw new MemoryError('internal', 'This extractor has no observe()')
    const messages = toObserve(await unobserved(ctx, job.sessionId), settings.observeTokens)
    if (messages.length === 0) return void (await write(ctx, ['extractionJobs'], () => jobsTable(ctx).delete(job.seq!)))
    const current = await read(ctx, ['observations'], () => activeObservations(ctx, job.sessionId, ctx.now()))
    const answer = await extractor.observe(
      {
        projectId: job.projectId,
        sessionId: job.sessionId,
        messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content, createdAt: m.createdAt, seq: m.seq })),
        observations: current.map((o) => ({ text: o.text, priority: o.priority, observedAt: o.observedAt })),
      },
      view,
    )
    const last = messages[messages.length - 1]!
    plan = { kind: 'observe', drafts: checkDrafts(answer, 'observe'), throughMessageId: last.id, defaultAt: last.createdAt }
    usage = answer.usage
  } else {
    if (!extractor.reflect) throw new MemoryError('internal', 'This extractor has no reflect()')
    const current = await read(ctx, ['observations'], () => activeObservations(ctx, job.sessionId, ctx.now()))
    if (current.length === 0) return void (await write(ctx, ['extractionJobs'], () => jobsTable(ctx).delete(job.seq!)))
    const answer = await extractor.reflect(
      {
        projectId: job.projectId,
        sessionId: job.sessionId,
        observations: current.map((o) => ({ id: o.id, text: o.text, priority: o.priority, observedAt: o.observedAt })),
      },
      view,
    )
    const newest = current.reduce((a, b) => (b.observedAt >= a.observedAt ? b : a))
    plan = {
      kind: 'reflect',
      drafts: checkDrafts(answer, 'reflect'),
      replaces: current.map((o) => o.id),
      throughMessageId: newest.throughMessageId,
      defaultAt: newest.observedAt,
    }
    usage = answer.usage
  }
  await write(
    ctx,
    ctx.db.tables.map((t) => t.name),
    async (w) => {
      if (!(await jobsTable(ctx).get(job.seq!))) return
      await writeObservations(ctx, w, job.projectId, job.sessionId, plan)
      await spend(usage)
      await jobsTable(ctx).delete(job.seq!)
    },
  )
}
