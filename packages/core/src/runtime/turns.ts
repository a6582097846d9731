import type { Table } from 'dexie'
import type { Context } from '../context/context.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { mapError } from '../store/map-error.js'
import type { Memory } from '../compose/memory.js'
import { requireProject } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkNumber, checkOptions, checkString } from '../store/validate.js'
import { assertActive } from '../sessions/sessions.js'
import type { SessionRow } from '../store/rows.js'
import { type WriteScope, read, readOne, write } from '../store/write.js'
import { appendEntry } from './journal.js'
import { createTurnCoordinator, DEFAULT_COORDINATOR_LIMITS, type CoordinatorLimits } from './turn-coordinator.js'
import { applyOperation, checkOperations, memoryView, prepareOperations, type Extractor, type MemoryOperation } from './turn-extraction.js'
import { enqueueTurn } from '../extraction/extraction-jobs.js'
import type { ExtractionQueue } from '../extraction/extraction-queue.js'
import type { TurnHolds } from '../extraction/turn-holds.js'

export type { Exchange, Extractor, MemoryOperation, MemoryView } from './turn-extraction.js'

/** What {@link TurnsApi.begin} takes besides the project. */
export interface TurnBeginInput {
  sessionId: string
  turnId: string
  prompt: string
  budget: number
}
/** What {@link TurnsApi.end} takes. */
export interface TurnEndInput {
  sessionId: string
  turnId: string
  reply: string
  interrupted?: boolean
}
/** What {@link TurnsApi.partial} takes. */
export interface TurnPartialInput {
  sessionId: string
  turnId: string
  text: string
}

/** What `turns.end` reports. `written` counts the extractor's operations applied. */
export interface TurnEndResult {
  written: number
  /** Set when the extractor threw or its operations were rejected; nothing of them was applied. */
  extractionError?: { code: string; message: string }
  /**
   * With a background extractor: the queued extraction job (`written` is then 0; the job's
   * writes follow, `memory.extraction.flush()` waits for them).
   */
  jobId?: number
}

/** A stored turn. */
interface TurnRow {
  sessionId: string
  turnId: string
  projectId: string
  prompt: string
  budget: number
  status: 'open' | 'ended' | 'interrupted'
  context: Context
  createdAt: number
  updatedAt: number
  partialReply?: string
  reply?: string
  written?: number
  extractionError?: { code: string; message: string }
  /** The user message of the prompt, in a conversation session. */
  promptMessageId?: string
  /** The assistant message of the reply, in a conversation session. */
  replyMessageId?: string
  jobId?: number
}

const MAX_TEXT = 1_000_000

/** The conversation messages of a turn (its prompt and reply), the provenance of what its extraction writes. */
const messageIdsOf = (row: Pick<TurnRow, 'promptMessageId' | 'replyMessageId'>): string[] =>
  [row.promptMessageId, row.replyMessageId].filter((id): id is string => id !== undefined)

/** The agent-turn lifecycle. Journal records go to the journal session `sessionId`. */
export interface TurnsApi {
  /**
   * Begins a turn: reconciles the session's turns that began and never ended (journal
   * `turn.interrupted`), builds the context for the prompt, stores it with the turn and
   * records `turn.begin` (and the prompt as a user message when `sessionId` is a
   * conversation session). A repeated begin of the same turn returns the stored context
   * without retrieving again.
   * A begin that fails (closed conversation session, failing retrieval) writes nothing.
   * @throws MemoryError `invalid_input`, `not_found` (project), `conflict` (the turn id was
   * begun with another prompt or project, or the conversation session is closed).
   */
  begin(projectId: string, turn: TurnBeginInput): Promise<{ context: Context }>
  /**
   * Ends a turn: records the reply (journal `turn.end`, or `turn.interrupted` with
   * `interrupted: true`; an assistant message in a conversation session), then runs the
   * extractor (not for interrupted turns) and applies its operations in one transaction.
   * An extractor failure is journaled (`turn.extraction_failed`) and returned in
   * `extractionError`; the reply stays recorded. Ending an ended turn returns its result.
   * @throws MemoryError `invalid_input`, `not_found` (no such turn), `conflict` (the turn was
   * already reconciled as interrupted by a later turn).
   */
  end(turn: TurnEndInput): Promise<TurnEndResult>
  /** Saves the reply streamed so far, kept if the turn is later reconciled as interrupted. @throws MemoryError `not_found`, `conflict` (turn not open). */
  partial(turn: TurnPartialInput): Promise<void>
}

/** Creates the turns namespace of a store. */
export function createTurns(
  ctx: StoreContext,
  memory: Memory,
  extractor?: Extractor,
  limits: CoordinatorLimits = DEFAULT_COORDINATOR_LIMITS,
  queue?: ExtractionQueue,
  holds?: TurnHolds,
): TurnsApi {
  const turns = (): Table<TurnRow, [string, string]> => ctx.db.table<TurnRow, [string, string]>('turns')
  const allTables = () => ctx.db.tables.map((t) => t.name)
  const coordinator = createTurnCoordinator(limits, ctx.now)
  ctx.onClose.push(() => coordinator.clear())

  /** The conversation session with this id, if there is one. */
  const conversation = (sessionId: string) => memory.sessions.get(sessionId)

  async function reconcile(w: WriteScope, sessionId: string, exceptTurnId: string): Promise<void> {
    const open = await turns().where('[sessionId+status]').equals([sessionId, 'open']).toArray()
    for (const row of open) {
      if (row.turnId === exceptTurnId) continue
      await turns().put({ ...row, status: 'interrupted', updatedAt: ctx.now() })
      await appendEntry(ctx, w, sessionId, {
        kind: 'turn.interrupted',
        payload: { turnId: row.turnId, partialReply: row.partialReply ?? null, reason: 'next turn began' },
      })
    }
  }

  /** Every caller checks the begun turn against its own call, also when the result was shared. */
  function sameTurn(row: Pick<TurnRow, 'sessionId' | 'turnId' | 'projectId' | 'prompt' | 'context'>, projectId: string, prompt: string): { context: Context } {
    if (row.projectId !== projectId || row.prompt !== prompt) {
      throw new MemoryError(
        'conflict',
        `Turn ${JSON.stringify(row.turnId)} of session ${JSON.stringify(row.sessionId)} was begun with another ${row.projectId !== projectId ? 'project' : 'prompt'}; use a new turnId`,
      )
    }
    return { context: row.context }
  }

  async function reportFailure(row: TurnRow, error: unknown): Promise<TurnEndResult> {
    const e = mapError(error)
    const extractionError = { code: e.code, message: e.message }
    await write(ctx, allTables(), async (w) => {
      await turns().put({ ...row, written: 0, extractionError, updatedAt: ctx.now() })
      await appendEntry(ctx, w, row.sessionId, { kind: 'turn.extraction_failed', payload: { turnId: row.turnId, error: extractionError } })
    })
    ctx.status.fail('extractor', error, row.projectId)
    return { written: 0, extractionError }
  }

  async function extract(row: TurnRow): Promise<TurnEndResult> {
    let operations: MemoryOperation[]
    // Provenance of everything the extractor writes: the turn's prompt and reply messages.
    const messageIds = messageIdsOf(row)
    try {
      const exchange = {
        projectId: row.projectId,
        sessionId: row.sessionId,
        turnId: row.turnId,
        prompt: row.prompt,
        reply: row.reply ?? '',
        ...(messageIds.length > 0 ? { messageIds } : {}),
      }
      operations = checkOperations(await extractor!(exchange, memoryView(memory)))
      await prepareOperations(memory, operations)
    } catch (error) {
      return reportFailure(row, error)
    }
    try {
      return await write(ctx, allTables(), async (w) => {
        for (const op of operations) await applyOperation(memory, op, { ...row, messageIds })
        await turns().put({ ...row, written: operations.length, updatedAt: ctx.now() })
        await appendEntry(ctx, w, row.sessionId, { kind: 'turn.extracted', payload: { turnId: row.turnId, operations: operations.length } })
        ctx.status.recover('extractor')
        return { written: operations.length }
      })
    } catch (error) {
      return reportFailure(row, error)
    }
  }

  return {
    async begin(projectId, turn) {
      checkId('projectId', projectId)
      const t = checkOptions('turn', turn, ['sessionId', 'turnId', 'prompt', 'budget'])
      const sessionId = checkId('sessionId', t.sessionId)
      const turnId = checkId('turnId', t.turnId)
      const prompt = checkString('prompt', t.prompt, { nonEmpty: true, maxLength: MAX_TEXT })
      const budget = checkNumber('budget', t.budget, { min: 1, integer: true })
      // From here until its reply is recorded the turn holds the project's extraction jobs.
      const holdKey = `${sessionId}\u0001${turnId}`
      holds?.hold(projectId, holdKey)
      const begun = await coordinator
        .run(
          `begin\u0001${sessionId}\u0001${turnId}`,
          async (): Promise<TurnRow> => {
            const stored = await readOne(ctx, () => turns().get([sessionId, turnId]))
            if (stored) return stored
            const session = await conversation(sessionId)
            if (session && session.projectId !== projectId)
              throw invalidInput(
                `Session ${JSON.stringify(sessionId)} belongs to project ${JSON.stringify(session.projectId)}, not ${JSON.stringify(projectId)}`,
              )
            if (session) assertActive(session as SessionRow)
            // Checks only: open turns are reconciled in the transaction that records the new one,
            // so a begin that fails (closed session, failing retrieval) leaves them as they were.
            await read(ctx, ['projects'], () => requireProject(ctx, projectId))
            // Retrieval may call the embedder: it runs between transactions, never inside one.
            const context = await memory.context.build(projectId, { ...(session ? { sessionId } : {}), query: prompt, budget })
            return write(ctx, allTables(), async (w) => {
              const raced = await turns().get([sessionId, turnId])
              if (raced) return raced
              await reconcile(w, sessionId, turnId)
              const now = ctx.now()
              const row: TurnRow = { sessionId, turnId, projectId, prompt, budget, status: 'open', context, createdAt: now, updatedAt: now }
              if (session) row.promptMessageId = (await memory.messages.append(sessionId, { role: 'user', content: prompt, meta: { turnId } })).id
              await turns().add(row)
              await appendEntry(ctx, w, sessionId, { kind: 'turn.begin', payload: { turnId, projectId, prompt, contextTokens: context.tokens } })
              return row
            })
            // Settled begins are not reused: the stored turn answers a repeat (one read, no retrieval),
            // and a turn removed since (import replace) is begun again instead of served from memory.
          },
          { reuse: false },
        )
        .catch((error: unknown) => {
          holds?.release(projectId, holdKey)
          throw error
        })
      if (begun.status !== 'open' || begun.projectId !== projectId) holds?.release(projectId, holdKey)
      // The session's earlier open turns were reconciled as interrupted: they hold nothing.
      else holds?.releaseOthers(projectId, `${sessionId}\u0001`, holdKey)
      return sameTurn(begun, projectId, prompt)
    },

    async end(turn) {
      const t = checkOptions('turn', turn, ['sessionId', 'turnId', 'reply', 'interrupted'])
      const sessionId = checkId('sessionId', t.sessionId)
      const turnId = checkId('turnId', t.turnId)
      const reply = checkString('reply', t.reply, { maxLength: MAX_TEXT })
      if (t.interrupted !== undefined && typeof t.interrupted !== 'boolean') throw invalidInput('interrupted must be a boolean')
      const interrupted = t.interrupted === true
      return coordinator.run(`end\u0001${sessionId}\u0001${turnId}`, async () => {
        const session = await conversation(sessionId)
        const recorded = await write(ctx, allTables(), async (w) => {
          const row = await turns().get([sessionId, turnId])
          if (!row) throw new MemoryError('not_found', `No turn ${JSON.stringify(turnId)} in session ${JSON.stringify(sessionId)}; call turns.begin first`)
          if (row.reply !== undefined) return { row, done: true }
          if (row.status !== 'open')
            throw new MemoryError(
              'conflict',
              `Turn ${JSON.stringify(turnId)} was reconciled as interrupted when a later turn began; its reply can no longer be recorded`,
            )
          const next: TurnRow = { ...row, status: interrupted ? 'interrupted' : 'ended', reply, updatedAt: ctx.now() }
          if ((extractor === undefined && queue === undefined) || interrupted) next.written = 0
          await appendEntry(
            ctx,
            w,
            sessionId,
            interrupted
              ? { kind: 'turn.interrupted', payload: { turnId, partialReply: reply, reason: 'ended as interrupted' } }
              : { kind: 'turn.end', payload: { turnId, reply } },
          )
          const replyMessage =
            session && reply.length > 0
              ? await memory.messages.append(sessionId, { role: 'assistant', content: reply, meta: interrupted ? { turnId, interrupted } : { turnId } })
              : undefined
          if (replyMessage) next.replyMessageId = replyMessage.id
          // A background extractor: the turn and its job commit together; the model runs after.
          if (queue !== undefined && !interrupted) {
            const messageIds = messageIdsOf(next)
            next.jobId = await enqueueTurn(ctx, { projectId: row.projectId, sessionId, turnId, prompt: row.prompt, reply, messageIds })
          }
          await turns().put(next)
          return { row: next, done: false }
        })
        const { row } = recorded
        holds?.release(row.projectId, `${sessionId}\u0001${turnId}`)
        if (row.jobId !== undefined) {
          if (!recorded.done) queue!.kick()
          return { written: row.written ?? 0, jobId: row.jobId }
        }
        if (recorded.done || row.written !== undefined) {
          return { written: row.written ?? 0, ...(row.extractionError ? { extractionError: row.extractionError } : {}) }
        }
        return extract(row)
      })
    },

    async partial(turn) {
      const t = checkOptions('turn', turn, ['sessionId', 'turnId', 'text'])
      const sessionId = checkId('sessionId', t.sessionId)
      const turnId = checkId('turnId', t.turnId)
      const text = checkString('text', t.text, { maxLength: MAX_TEXT })
      await write(ctx, ['turns'], async () => {
        const row = await turns().get([sessionId, turnId])
        if (!row) throw new MemoryError('not_found', `No turn ${JSON.stringify(turnId)} in session ${JSON.stringify(sessionId)}`)
        if (row.status !== 'open') throw new MemoryError('conflict', `Turn ${JSON.stringify(turnId)} is ${row.status}, not open`)
        await turns().put({ ...row, partialReply: text, updatedAt: ctx.now() })
      })
    },
  }
}
