import { invalidInput } from '../store/errors.js'
import type { Source } from '../store/rows.js'
import { checkId, checkJson, checkNumber, checkOptionalString, checkOptions, checkTags, checkTime, describe, type Json } from '../store/validate.js'

/** Longest `source.note` we accept (characters). */
export const MAX_SOURCE_NOTE = 2000

const SOURCE_FIELDS = new Set(['sessionId', 'messageId', 'messageIds', 'tool', 'note'])
/** Most message ids a provenance record lists. */
const MAX_SOURCE_MESSAGES = 200

type SetOptions = { confidence?: unknown; source?: unknown; tags?: unknown; expiresAt?: unknown }

/** A fact write, validated and detached from the caller's objects. */
export interface FactInput {
  projectId: string
  key: string
  value: Json
  confidence: number
  source?: Source
  tags: string[]
  expiresAt?: number
}

/**
 * Validates every argument of `facts.set` before anything is written.
 * The value is cloned so later mutation by the caller cannot reach the store.
 *
 * @throws MemoryError `invalid_input` on a bad id, key, value, confidence, source or tag;
 * `limit_exceeded` when the value is larger than `maxValueBytes` as JSON.
 */
export function checkFactInput(projectId: unknown, key: unknown, value: unknown, options: unknown, maxValueBytes?: number): FactInput {
  checkId('projectId', projectId)
  checkId('key', key)
  const opts = checkOptions('options', options as SetOptions | undefined, ['confidence', 'source', 'tags', 'expiresAt'])
  const expiresAt = opts.expiresAt === undefined ? undefined : checkTime('expiresAt', opts.expiresAt)
  checkJson('value', value, maxValueBytes)
  const confidence = opts.confidence === undefined ? 1 : checkNumber('confidence', opts.confidence, { min: 0, max: 1 })
  const source = checkSource(opts.source)
  const tags = checkTags(opts.tags)
  return {
    projectId: projectId as string,
    key: key as string,
    value: structuredClone(value) as Json,
    confidence,
    ...(source ? { source } : {}),
    tags,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  }
}

/**
 * Validates a provenance record: a plain object with only `sessionId`,
 * `messageId`, `tool` (id-like strings), `messageIds` (at most 200 ids) and `note` (free text). Returns a copy
 * without undefined fields, or undefined when no field is set.
 *
 * @throws MemoryError `invalid_input` on unknown fields or bad values; `limit_exceeded` on a too long note.
 */
export function checkSource(value: unknown): Source | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(`source must be an object, got ${describe(value)}`)
  const out: Source = {}
  for (const [field, v] of Object.entries(value)) {
    if (v === undefined) continue
    if (!SOURCE_FIELDS.has(field))
      throw invalidInput(`source has an unknown field ${JSON.stringify(field)}; allowed: sessionId, messageId, messageIds, tool, note`)
    if (field === 'messageIds') {
      if (!Array.isArray(v) || v.length > MAX_SOURCE_MESSAGES) throw invalidInput(`source.messageIds must be an array of at most ${MAX_SOURCE_MESSAGES} ids`)
      out.messageIds = v.map((id: unknown, i) => checkId(`source.messageIds[${i}]`, id))
    } else if (field === 'note') out.note = checkOptionalString('source.note', v, MAX_SOURCE_NOTE)!
    else out[field as 'sessionId' | 'messageId' | 'tool'] = checkId(`source.${field}`, v)
  }
  return Object.keys(out).length > 0 ? out : undefined
}
