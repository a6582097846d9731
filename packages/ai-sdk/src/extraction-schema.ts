import { z } from 'zod'

const reason = z.string().describe('Why, in a few words')
const key = z.string().min(1).max(200).describe('The fact key: reuse an existing key when the fact is about the same thing')
const expiresAt = z.string().optional().describe('ISO date after which it is no longer true (only for things true for a while)')
const entityName = z.string().min(1).max(200).describe('An entity by name: reuse an existing entity name')
const entityType = z.string().min(1).max(64).describe('person, place, organisation, project, or another type')
const predicate = z.string().min(1).max(100).describe('snake_case, e.g. works_at, lives_in, likes')

/** One memory operation as the model answers it. */
export const operationSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('add_fact'),
    key,
    value: z.union([z.string(), z.number(), z.boolean()]).describe('The value, short'),
    confidence: z.number().min(0).max(1).optional(),
    tags: z.array(z.string()).max(10).optional(),
    expiresAt,
    reason,
  }),
  z.object({
    type: z.literal('update_fact'),
    key,
    value: z.union([z.string(), z.number(), z.boolean()]),
    confidence: z.number().min(0).max(1).optional(),
    expiresAt,
    reason,
  }),
  z.object({ type: z.literal('delete_fact'), key, reason }),
  z.object({ type: z.literal('append_block'), label: z.string().min(1), text: z.string().min(1), reason }),
  z.object({ type: z.literal('replace_block'), label: z.string().min(1), old_text: z.string().min(1), new_text: z.string(), reason }),
  z.object({ type: z.literal('add_passage'), text: z.string().min(1), tags: z.array(z.string()).max(10).optional(), expiresAt, reason }),
  z.object({
    type: z.literal('upsert_entity'),
    name: entityName,
    entity_type: entityType,
    aliases: z.array(entityName).max(10).optional(),
    observations: z.array(z.string().min(1).max(2000)).max(20).optional().describe('Short facts about it'),
    reason,
  }),
  z.object({
    type: z.literal('add_relation'),
    subject: entityName,
    subject_type: entityType.optional(),
    predicate,
    object: entityName.optional().describe('The object entity, by name (or give value)'),
    object_type: entityType.optional(),
    value: z.union([z.string(), z.number(), z.boolean()]).optional().describe('A literal object, when it is not an entity'),
    valid_from: z.string().optional().describe('ISO date it became true (default now)'),
    confidence: z.number().min(0).max(1).optional(),
    reason,
  }),
  z.object({
    type: z.literal('end_relation'),
    subject: entityName,
    predicate,
    object: entityName.optional(),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    at: z.string().optional().describe('ISO date it stopped being true (default now)'),
    reason,
  }),
])

/** The extraction answer: the operations, none when nothing is worth remembering. */
export const extractionSchema = z.object({ operations: z.array(operationSchema).max(50) })

/** One observation as the model answers it. */
export const observationSchema = z.object({
  text: z.string().min(1).max(2000),
  priority: z.enum(['high', 'medium', 'low']),
  date: z.string().optional().describe('ISO date of what it observes'),
  expiresAt,
})

/** The observer's and the reflector's answer. */
export const observationsSchema = z.object({ observations: z.array(observationSchema).max(100) })

/** An operation the model answered. */
export type ModelOperation = z.infer<typeof operationSchema>
/** An observation the model answered. */
export type ModelObservation = z.infer<typeof observationSchema>
