import { z } from 'zod'

const reason = z.string().describe('Why, in a few words')
const key = z.string().min(1).max(200).describe('The fact key: reuse an existing key when the fact is about the same thing')
const expiresAt = z.string().optional().describe('ISO date after which it is no longer true (only for things true for a while)')

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
