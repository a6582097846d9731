import { invalidInput } from '../store/errors.js'
import type { Block } from '../blocks/blocks.js'
import type { Fact } from '../facts/facts.js'
import type { Memory } from '../compose/memory.js'
import type { Json } from '../store/validate.js'

/** A memory write an {@link Extractor} asks for; `projectId` defaults to the turn's project. */
export type MemoryOperation =
  | { op: 'fact.set'; projectId?: string; key: string; value: Json; confidence?: number; tags?: string[] }
  | { op: 'fact.delete'; projectId?: string; key: string }
  | { op: 'block.append'; projectId?: string; label: string; text: string }
  | { op: 'passage.create' | 'passage.insert'; projectId?: string; text: string; tags?: string[] }
/** A finished exchange, as an extractor sees it. */
export interface Exchange {
  projectId: string
  sessionId: string
  turnId: string
  prompt: string
  reply: string
}
/** Read access to memory that an extractor may consult. */
export interface MemoryView {
  getFact(projectId: string, key: string): Promise<Fact | undefined>
  listFacts(projectId: string): Promise<Fact[]>
  getBlock(projectId: string, label: string): Promise<Block | undefined>
}
/**
 * App-supplied: turns an exchange into memory writes (an LLM call, rules, …). It runs
 * outside any transaction, so it may take as long as it needs.
 */
export type Extractor = (exchange: Exchange, view: MemoryView) => Promise<MemoryOperation[]> | MemoryOperation[]

// 'passage.insert' is the name before archive.insert became archive.create; still accepted.
const OPS = new Set(['fact.set', 'fact.delete', 'block.append', 'passage.create', 'passage.insert'])
/** Most operations one extraction may apply. */
export const MAX_OPERATIONS = 1_000

/** The read-only view of memory handed to an extractor. */
export function memoryView(memory: Memory): MemoryView {
  return {
    getFact: (projectId, key) => memory.facts.get(projectId, key),
    listFacts: async (projectId) => (await memory.facts.list(projectId, { limit: 10_000 })).items,
    getBlock: (projectId, label) => memory.blocks.get(projectId, label),
  }
}

/**
 * Checks the shape of what an extractor returned (each namespace checks the values when
 * the operation is applied). @throws MemoryError `invalid_input`.
 */
export function checkOperations(value: unknown): MemoryOperation[] {
  if (!Array.isArray(value)) throw invalidInput(`the extractor must return an array of operations, got ${typeof value}`)
  if (value.length > MAX_OPERATIONS) throw invalidInput(`the extractor returned ${value.length} operations, more than ${MAX_OPERATIONS}`)
  value.forEach((op: unknown, i) => {
    if (typeof op !== 'object' || op === null || !OPS.has((op as { op?: string }).op ?? '')) {
      throw invalidInput(`operation ${i} must be { op: 'fact.set' | 'fact.delete' | 'block.append' | 'passage.create', … }`)
    }
  })
  return value as MemoryOperation[]
}

/**
 * Applies one operation through the memory namespaces. Call it inside a write() over
 * every table so the namespaces' own writes join one transaction.
 */
export async function applyOperation(memory: Memory, op: MemoryOperation, turn: { projectId: string; sessionId: string; turnId: string }): Promise<void> {
  const projectId = op.projectId ?? turn.projectId
  const source = { sessionId: turn.sessionId, note: `turn:${turn.turnId}` }
  switch (op.op) {
    case 'fact.set':
      await memory.facts.set(projectId, op.key, op.value, {
        source,
        ...(op.confidence === undefined ? {} : { confidence: op.confidence }),
        ...(op.tags === undefined ? {} : { tags: op.tags }),
      })
      return
    case 'fact.delete':
      await memory.facts.delete(projectId, op.key)
      return
    case 'block.append':
      await memory.blocks.append(projectId, op.label, op.text)
      return
    case 'passage.create':
    case 'passage.insert':
      await memory.archive.create(projectId, op.text, { source, ...(op.tags === undefined ? {} : { tags: op.tags }) })
      return
  }
}
