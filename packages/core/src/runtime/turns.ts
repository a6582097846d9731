import type { Context } from '../context/context.js'
import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'
import type { Fact } from '../facts.js'
import type { Block } from '../blocks.js'
import type { Json } from '../validate.js'

/** A memory write an {@link Extractor} asks for; `projectId` defaults to the turn's project. */
export type MemoryOperation =
  | { op: 'fact.set'; projectId?: string; key: string; value: Json; confidence?: number; tags?: string[] }
  | { op: 'fact.delete'; projectId?: string; key: string }
  | { op: 'block.append'; projectId?: string; label: string; text: string }
  | { op: 'passage.insert'; projectId?: string; text: string; tags?: string[] }
/** A finished exchange, as an extractor sees it. */
export interface Exchange { projectId: string; sessionId: string; turnId: string; prompt: string; reply: string }
/** Read access to memory that an extractor may consult. */
export interface MemoryView {
  getFact(projectId: string, key: string): Promise<Fact | undefined>
  listFacts(projectId: string): Promise<Fact[]>
  getBlock(projectId: string, label: string): Promise<Block | undefined>
}
/** App-supplied: turns an exchange into memory writes (an LLM call, rules, …). */
export type Extractor = (exchange: Exchange, view: MemoryView) => Promise<MemoryOperation[]> | MemoryOperation[]

/** The agent-turn lifecycle. */
export interface TurnsApi {
  begin(turn: { projectId: string; sessionId: string; turnId: string; prompt: string; budget: number }): Promise<{ context: Context }>
  end(turn: { sessionId: string; turnId: string; reply: string; interrupted?: boolean }): Promise<{ written: number }>
}

/** Creates the turns namespace of a store. */
export function createTurns(ctx: StoreContext, _memory: import("../memory.js").Memory): TurnsApi {
  return pending('turns', ctx)
}
