import { invalidInput, MemoryError } from '../store/errors.js'
import type { Block } from '../blocks/blocks.js'
import type { Fact } from '../facts/facts.js'
import type { Memory } from '../compose/memory.js'
import type { Json } from '../store/validate.js'
import type { Hit, SearchOptions } from '../search/types.js'
import type { Entity } from '../entities/entity-rows.js'
import { applyKnowledgeOperation, checkKnowledgeOperation, KNOWLEDGE_OPS, type KnowledgeOperation, prepareKnowledge } from './knowledge-operations.js'

export type { KnowledgeOperation }

/**
 * A memory write an {@link Extractor} asks for; `projectId` defaults to the turn's project.
 * `reason` is the extractor's why (kept in the journal, never applied); `block.replace` swaps
 * exact text of a block (within its limit).
 */
export type MemoryOperation =
  | { op: 'fact.set'; projectId?: string; key: string; value: Json; confidence?: number; tags?: string[]; expiresAt?: number; reason?: string }
  | { op: 'fact.delete'; projectId?: string; key: string; reason?: string }
  | { op: 'block.append'; projectId?: string; label: string; text: string; reason?: string }
  | { op: 'block.replace'; projectId?: string; label: string; oldText: string; newText: string; reason?: string }
  | { op: 'passage.create' | 'passage.insert'; projectId?: string; text: string; tags?: string[]; expiresAt?: number; reason?: string }
  | KnowledgeOperation
/** One turn of an exchange: what the user said and what the agent answered. */
export interface ExchangeTurn {
  turnId: string
  prompt: string
  reply: string
  /** The conversation messages of this turn (prompt, reply), when the session is a conversation. */
  messageIds?: string[]
}
/** A finished exchange, as an extractor sees it. */
export interface Exchange {
  projectId: string
  sessionId: string
  /** The last turn's id (of `turns`, when a background queue batched several). */
  turnId: string
  prompt: string
  reply: string
  /** The conversation messages the exchange came from (provenance of what it writes). */
  messageIds?: string[]
  /** Every turn of the exchange in order, the last one included (the background queue batches turns when it falls behind). */
  turns?: ExchangeTurn[]
}
/** Read access to memory that an extractor may consult. */
export interface MemoryView {
  getFact(projectId: string, key: string): Promise<Fact | undefined>
  listFacts(projectId: string): Promise<Fact[]>
  getBlock(projectId: string, label: string): Promise<Block | undefined>
  /** The project's core blocks. */
  listBlocks(projectId: string): Promise<Block[]>
  /** `memory.search` (hybrid when the store has an embedder); no hits when the store has no search. */
  search(projectId: string, query: string, options?: SearchOptions): Promise<Hit[]>
  /**
   * The entities most related to a text, at most `limit` (default 10): those it names first, then
   * those search finds; none when the store has no knowledge module.
   */
  relatedEntities?(projectId: string, text: string, limit?: number): Promise<Entity[]>
}
/**
 * App-supplied: turns an exchange into memory writes (an LLM call, rules, …). It runs
 * outside any transaction, so it may take as long as it needs.
 */
export type Extractor = (exchange: Exchange, view: MemoryView) => Promise<MemoryOperation[]> | MemoryOperation[]

// 'passage.insert' is the name before archive.insert became archive.create; still accepted.
const OPS = new Set(['fact.set', 'fact.delete', 'block.append', 'block.replace', 'passage.create', 'passage.insert', ...KNOWLEDGE_OPS])
/** Most operations one extraction may apply. */
export const MAX_OPERATIONS = 1_000

/** The read-only view of memory handed to an extractor. */
export function memoryView(memory: Memory): MemoryView {
  return {
    getFact: (projectId, key) => memory.facts.get(projectId, key),
    listFacts: async (projectId) => (await memory.facts.list(projectId, { limit: 10_000 })).items,
    getBlock: (projectId, label) => memory.blocks.get(projectId, label),
    listBlocks: (projectId) => memory.blocks.list(projectId),
    search: async (projectId, query, options) => (memory.search ? memory.search(projectId, query, options) : []),
    relatedEntities: (projectId, text, limit) => relatedEntities(memory, projectId, text, limit),
  }
}

/** Most entities {@link MemoryView.relatedEntities} answers. */
const MAX_RELATED_ENTITIES = 50

async function relatedEntities(memory: Memory, projectId: string, text: string, limit = 10): Promise<Entity[]> {
  const n = Math.max(0, Math.min(MAX_RELATED_ENTITIES, Math.floor(limit)))
  if (n === 0 || !hasKnowledge(memory)) return []
  const named = await memory.entities.mentioned(projectId, text.slice(0, 10_000), { limit: Math.min(n, 100) })
  const out = new Map(named.map((e) => [e.id, e]))
  if (out.size < n && memory.search) {
    const hits = await memory.search(projectId, text.slice(0, 2_000), { kinds: ['entity'], limit: n })
    for (const h of hits) {
      if (out.size >= n) break
      const id = h.id.startsWith('entity:') ? h.id.slice('entity:'.length) : h.id
      if (out.has(id)) continue
      const e = await memory.entities.get(projectId, id)
      if (e && e.mergedInto === undefined) out.set(e.id, e)
    }
  }
  return [...out.values()].slice(0, n)
}

/** Whether the memory has the knowledge namespaces (a `createMemory` without `knowledgeModule` has none). */
export function hasKnowledge(memory: Memory): boolean {
  return (memory as Partial<Memory>).entities !== undefined && (memory as Partial<Memory>).relations !== undefined
}

/**
 * Loads what applying `operations` needs before its transaction opens (the knowledge code loads
 * on first use, and a transaction must not wait on a module load).
 */
export async function prepareOperations(memory: Memory, operations: readonly MemoryOperation[]): Promise<void> {
  if (operations.some((op) => KNOWLEDGE_OPS.includes(op.op as KnowledgeOperation['op']))) await prepareKnowledge(memory)
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
      throw invalidInput(
        `operation ${i} must be { op: 'fact.set' | 'fact.delete' | 'block.append' | 'block.replace' | 'passage.create' | 'entity.upsert' | 'relation.add' | 'relation.end', … }`,
      )
    }
  })
  return value as MemoryOperation[]
}

/**
 * Applies one operation through the memory namespaces. Call it inside a write() over
 * every table so the namespaces' own writes join one transaction.
 */
export async function applyOperation(
  memory: Memory,
  op: MemoryOperation,
  turn: { projectId: string; sessionId: string; turnId: string; messageIds?: readonly string[] },
): Promise<void> {
  const projectId = op.projectId ?? turn.projectId
  const source = { sessionId: turn.sessionId, note: `turn:${turn.turnId}`, ...(turn.messageIds?.length ? { messageIds: [...turn.messageIds] } : {}) }
  switch (op.op) {
    case 'fact.set':
      await memory.facts.set(projectId, op.key, op.value, {
        source,
        ...(op.confidence === undefined ? {} : { confidence: op.confidence }),
        ...(op.tags === undefined ? {} : { tags: op.tags }),
        ...(op.expiresAt === undefined ? {} : { expiresAt: op.expiresAt }),
      })
      return
    case 'fact.delete':
      await memory.facts.delete(projectId, op.key)
      return
    case 'block.append':
      await memory.blocks.append(projectId, op.label, op.text)
      return
    case 'block.replace':
      if (!(await memory.blocks.replace(projectId, op.label, op.oldText, op.newText)))
        throw new MemoryError('not_found', `Block ${JSON.stringify(op.label)} holds no text ${JSON.stringify(op.oldText.slice(0, 80))}`)
      return
    case 'entity.upsert':
    case 'relation.add':
    case 'relation.end':
      if (!hasKnowledge(memory)) throw invalidInput(`${op.op} needs the knowledge module (openMemory has it; createMemory needs knowledgeModule())`)
      // Checked whole before its first write: a bad operation writes nothing.
      await applyKnowledgeOperation(memory, checkKnowledgeOperation(op), projectId, source)
      return
    case 'passage.create':
    case 'passage.insert':
      await memory.archive.create(projectId, op.text, {
        source,
        ...(op.tags === undefined ? {} : { tags: op.tags }),
        ...(op.expiresAt === undefined ? {} : { expiresAt: op.expiresAt }),
      })
      return
  }
}
