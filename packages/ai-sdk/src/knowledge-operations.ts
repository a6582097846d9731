import type { KnowledgeOperation } from '@engram/core'
import type { ModelOperation } from './extraction-schema.js'

type ModelKnowledgeOperation = Extract<ModelOperation, { type: 'upsert_entity' | 'add_relation' | 'end_relation' }>

/**
 * A date the model wrote, as epoch ms. One it wrote but that does not parse stays NaN, so memory
 * refuses the operation (shown in the queue's status) instead of dating it now.
 */
const dateOf = (text: string | undefined): number | undefined => (text === undefined || text.trim() === '' ? undefined : Date.parse(text))

const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T

/** A knowledge operation the model answered, as Engram's (entities by name; the store resolves them). */
export function toKnowledgeOperation(op: ModelKnowledgeOperation): KnowledgeOperation {
  switch (op.type) {
    case 'upsert_entity':
      return defined({ op: 'entity.upsert', name: op.name, type: op.entity_type, aliases: op.aliases, observations: op.observations, reason: op.reason })
    case 'add_relation':
      return defined({
        op: 'relation.add',
        subject: op.subject,
        subjectType: op.subject_type,
        predicate: op.predicate,
        object: op.object,
        objectType: op.object_type,
        value: op.value,
        validFrom: dateOf(op.valid_from),
        confidence: op.confidence,
        reason: op.reason,
      })
    case 'end_relation':
      return defined({
        op: 'relation.end',
        subject: op.subject,
        predicate: op.predicate,
        object: op.object,
        value: op.value,
        at: dateOf(op.at),
        reason: op.reason,
      })
  }
}
