import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'
import type { Json } from '../validate.js'

/** One append-only journal record of an agent session. */
export interface JournalRecord { sessionId: string; seq: number; kind: string; payload: Json; occurredAt: number; triggerId?: string; idempotencyKey?: string }
/** What `journal.append` takes. */
export interface JournalEntry { kind: string; payload: Json; triggerId?: string; idempotencyKey?: string; occurredAt?: number }

/** The agent runtime's journal. */
export interface JournalApi {
  append(sessionId: string, entry: JournalEntry): Promise<JournalRecord>
  load(sessionId: string): Promise<{ sessionId: string; lastSeq?: number; latestOutcome?: JournalRecord; records: JournalRecord[] }>
  page(options: { sessionId: string; since?: number; until?: number; after?: number; limit: number }): Promise<{ items: JournalRecord[]; next?: number }>
  sessions(options: { since?: number; until?: number; limit: number; offset?: number }): Promise<{ sessionId: string; first: number; last: number; count: number }[]>
  findOutcome(sessionId: string, idempotencyKey: string): Promise<JournalRecord | undefined>
  pendingApproval(sessionId: string, resumeToken: string): Promise<JournalRecord | undefined>
}

/** Creates the journal namespace of a store. */
export function createJournal(ctx: StoreContext): JournalApi {
  return pending('journal', ctx)
}
