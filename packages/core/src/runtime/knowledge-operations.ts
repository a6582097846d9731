import type { Memory } from '../compose/memory.js'
import { checkList, checkName, checkObservation, checkType, MAX_ALIASES, MAX_OBSERVATIONS } from '../entities/entity-input.js'
import type { Entity } from '../entities/entity-rows.js'
import { nameKey } from '../entities/entity-rows.js'
import { checkLiteral, checkPredicate } from '../relations/relation-input.js'
import type { Literal, Provenance } from '../relations/relation-rows.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { checkNumber, checkTime } from '../store/validate.js'

/**
 * The knowledge writes an extractor may ask for. Entities are named, never given by id: a
 * name or alias resolves (case and accents ignored) to the entity it already names, so the
 * model reuses what exists. `relation.add` creates a missing subject or object when its type
 * is given; `relation.end` closes the relation of `subject predicate` holding at `at` (default
 * now), the one to `object` / `value` when given.
 */
export type KnowledgeOperation =
  | { op: 'entity.upsert'; projectId?: string; name: string; type: string; aliases?: string[]; observations?: string[]; reason?: string }
  | {
      op: 'relation.add'
      projectId?: string
      subject: string
      subjectType?: string
      predicate: string
      object?: string
      objectType?: string
      value?: Literal
      validFrom?: number
      confidence?: number
      reason?: string
    }
  | {
      op: 'relation.end'
      projectId?: string
      subject: string
      predicate: string
      object?: string
      value?: Literal
      at?: number
      reason?: string
    }

/** The knowledge operation names. */
export const KNOWLEDGE_OPS: readonly KnowledgeOperation['op'][] = ['entity.upsert', 'relation.add', 'relation.end']

/** Where an operation came from, as a turn gives it. */
export interface OperationSource {
  sessionId: string
  note: string
  messageIds?: string[]
}

const FIELDS: Record<KnowledgeOperation['op'], readonly string[]> = {
  'entity.upsert': ['op', 'projectId', 'name', 'type', 'aliases', 'observations', 'reason'],
  'relation.add': ['op', 'projectId', 'subject', 'subjectType', 'predicate', 'object', 'objectType', 'value', 'validFrom', 'confidence', 'reason'],
  'relation.end': ['op', 'projectId', 'subject', 'predicate', 'object', 'value', 'at', 'reason'],
}

const optional = <T>(value: unknown, check: (v: unknown) => T): T | undefined => (value === undefined ? undefined : check(value))

/**
 * Checks a knowledge operation whole (names, types, predicate, literal, times, confidence)
 * before anything of it is written. @throws MemoryError `invalid_input`, `limit_exceeded`.
 */
export function checkKnowledgeOperation(op: KnowledgeOperation): KnowledgeOperation {
  const unknown = Object.keys(op).find((k) => !FIELDS[op.op].includes(k) && (op as unknown as Record<string, unknown>)[k] !== undefined)
  if (unknown !== undefined) throw invalidInput(`${op.op} has an unknown field ${JSON.stringify(unknown)}`)
  if (op.reason !== undefined && typeof op.reason !== 'string') throw invalidInput(`${op.op}.reason must be a string`)
  if (op.op === 'entity.upsert') {
    return {
      op: op.op,
      ...(op.projectId === undefined ? {} : { projectId: op.projectId }),
      name: checkName('entity.upsert.name', op.name),
      type: checkType('entity.upsert.type', op.type),
      aliases: checkList('entity.upsert.aliases', op.aliases, MAX_ALIASES, checkName),
      observations: checkList('entity.upsert.observations', op.observations, MAX_OBSERVATIONS, checkObservation),
      ...(op.reason === undefined ? {} : { reason: op.reason }),
    }
  }
  const subject = checkName(`${op.op}.subject`, op.subject)
  const predicate = checkPredicate(`${op.op}.predicate`, op.predicate)
  const object = optional(op.object, (v) => checkName(`${op.op}.object`, v))
  const value = optional(op.value, (v) => checkLiteral(`${op.op}.value`, v))
  if (object !== undefined && value !== undefined) throw invalidInput(`${op.op} takes object (an entity) or value (a literal), not both`)
  if (op.op === 'relation.add') {
    if (object === undefined && value === undefined) throw invalidInput('relation.add needs object (an entity name) or value (a literal)')
    if (object !== undefined && nameKey(object) === nameKey(subject)) throw invalidInput(`relation.add relates ${JSON.stringify(subject)} to itself`)
    const subjectType = optional(op.subjectType, (v) => checkType('relation.add.subjectType', v))
    const objectType = optional(op.objectType, (v) => checkType('relation.add.objectType', v))
    const validFrom = optional(op.validFrom, (v) => checkTime('relation.add.validFrom', v))
    const confidence = optional(op.confidence, (v) => checkNumber('relation.add.confidence', v, { min: 0, max: 1 }))
    return strip({ op: op.op, projectId: op.projectId, subject, subjectType, predicate, object, objectType, value, validFrom, confidence, reason: op.reason })
  }
  const at = optional(op.at, (v) => checkTime('relation.end.at', v))
  return strip({ op: op.op, projectId: op.projectId, subject, predicate, object, value, at, reason: op.reason })
}

function strip<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k]
  return o
}

/** Loads the knowledge code (outside any transaction: a transaction must not wait on a module load). */
export async function prepareKnowledge(memory: Memory): Promise<void> {
  await Promise.all([memory.relations.cardinality('related_to'), memory.entities.list('user', { limit: 1 }).catch(() => [])])
}

/** The entity a name resolves to: of the given type first, then of any type (the model's other word for a type still finds it). */
async function resolveRef(memory: Memory, projectId: string, name: string, type?: string): Promise<Entity | undefined> {
  return (type === undefined ? undefined : await memory.entities.resolve(projectId, name, { type })) ?? memory.entities.resolve(projectId, name)
}

const provenanceOf = (source: OperationSource): Provenance => ({
  ...(source.messageIds?.length ? { messageIds: source.messageIds.slice(-100) } : {}),
  source: source.note,
})

/**
 * Applies a checked knowledge operation through `memory.entities` and `memory.relations`,
 * inside the caller's write. Every read it needs comes before its first write, so a refused
 * operation writes nothing. Applied twice it writes once (upserts add only what is new; an
 * assertion already true is returned as it is; a relation already ended there stays).
 * @throws MemoryError `not_found` (a relation of an unknown entity without its type, nothing to end), and the namespaces' own.
 */
export async function applyKnowledgeOperation(memory: Memory, op: KnowledgeOperation, projectId: string, source: OperationSource): Promise<void> {
  const provenance = provenanceOf(source)
  switch (op.op) {
    case 'entity.upsert': {
      const found = await memory.entities.resolve(projectId, op.name)
      await memory.entities.upsert(projectId, {
        name: found?.name ?? op.name,
        type: found?.type ?? op.type,
        aliases: found && nameKey(found.name) !== nameKey(op.name) ? [op.name, ...(op.aliases ?? [])] : (op.aliases ?? []),
        observations: op.observations ?? [],
        provenance,
      })
      return
    }
    case 'relation.add': {
      const subject = await resolveRef(memory, projectId, op.subject, op.subjectType)
      const object = op.object === undefined ? undefined : await resolveRef(memory, projectId, op.object, op.objectType)
      if (!subject && op.subjectType === undefined) throw missing(op.subject, 'subjectType')
      if (op.object !== undefined && !object && op.objectType === undefined) throw missing(op.object, 'objectType')
      if (subject && object && subject.id === object.id) throw invalidInput(`relation.add relates ${JSON.stringify(subject.name)} to itself`)
      const s = subject ?? (await memory.entities.upsert(projectId, { name: op.subject, type: op.subjectType!, provenance }))
      const o =
        op.object === undefined ? undefined : (object ?? (await memory.entities.upsert(projectId, { name: op.object, type: op.objectType!, provenance })))
      await memory.relations.add(projectId, {
        subject: s.id,
        predicate: op.predicate,
        ...(o ? { object: o.id } : { value: op.value! }),
        ...(op.validFrom === undefined ? {} : { validFrom: op.validFrom }),
        ...(op.confidence === undefined ? {} : { confidence: op.confidence }),
        provenance,
      })
      return
    }
    case 'relation.end': {
      const subject = await memory.entities.resolve(projectId, op.subject)
      if (!subject) throw new MemoryError('not_found', `No entity named ${JSON.stringify(op.subject)} to end a relation of`)
      const object = op.object === undefined ? undefined : await memory.entities.resolve(projectId, op.object)
      if (op.object !== undefined && !object) throw new MemoryError('not_found', `No entity named ${JSON.stringify(op.object)}`)
      const matches = (r: { object?: string; value?: Literal }) =>
        (object === undefined || r.object === object.id) && (op.value === undefined || r.value === op.value)
      const at = op.at
      const query = { predicate: op.predicate, direction: 'out' } as const
      const holding = (
        await (at === undefined ? memory.relations.current(projectId, subject.id, query) : memory.relations.asOf(projectId, subject.id, at, query))
      ).filter(matches)
      if (holding.length === 0) {
        // Ended there already (the same operation applied before): nothing to do.
        const history = await memory.relations.history(projectId, subject.id, op.predicate)
        if (at !== undefined && history.some((r) => matches(r) && r.validTo === at)) return
        throw new MemoryError('not_found', `${JSON.stringify(op.subject)} has no ${JSON.stringify(op.predicate)} relation holding then to end`)
      }
      for (const r of holding) await memory.relations.end(projectId, r.id, at, { provenance })
      return
    }
  }
}

const missing = (name: string, field: string) =>
  new MemoryError('not_found', `No entity named ${JSON.stringify(name)}: upsert it first (entity.upsert) or give ${field}`)
