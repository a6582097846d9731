import { invalidInput, MemoryError } from '../store/errors.js'
import { checkId, checkNumber, checkOptions, checkString, checkTime, checkWellFormed, describe } from '../store/validate.js'
import { predicateKey } from './predicates.js'
import type { Literal, Provenance } from './relation-rows.js'

/** Longest predicate (characters). */
export const MAX_PREDICATE = 100
/** Longest literal string value (characters). */
export const MAX_LITERAL = 2_000
/** Most message ids in a relation's provenance. */
export const MAX_PROVENANCE_MESSAGES = 100

/** What `relations.add` takes: a subject entity, a predicate, and either an object entity or a literal value. */
export interface RelationInput {
  /** The subject entity's id. */
  subject: string
  /** `works_at`, `lives_in`, `likes`, …: its cardinality decides whether a new one closes the current one. */
  predicate: string
  /** The object entity's id (or give `value`). */
  object?: string
  /** A literal object (or give `object`). */
  value?: Literal
  /** When it became true (default: now). */
  validFrom?: number
  /** When it stopped being true, if known. */
  validTo?: number
  /** In [0, 1] (default 1). */
  confidence?: number
  provenance?: Provenance
}

/** A checked relation input. */
export interface CheckedRelation {
  subject: string
  predicate: string
  object?: string
  value?: Literal
  validFrom?: number
  validTo?: number
  confidence: number
  provenance?: Provenance
}

/** Checks a predicate: a trimmed, well-formed string of at most 100 characters with a letter or digit. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkPredicate(field: string, value: unknown): string {
  const p = checkWellFormed(field, checkString(field, value, { nonEmpty: true, maxLength: MAX_PREDICATE }).trim())
  if (!/[\p{L}\p{N}]/u.test(predicateKey(p))) throw invalidInput(`${field} needs letters or digits, got ${JSON.stringify(p)}`)
  return p
}

/** Checks a literal object. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkLiteral(field: string, value: unknown): Literal {
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return checkNumber(field, value)
  if (typeof value === 'string') return checkWellFormed(field, checkString(field, value, { nonEmpty: true, maxLength: MAX_LITERAL }))
  throw invalidInput(`${field} must be a string, number or boolean, got ${describe(value)}`)
}

/** Checks a provenance. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkProvenance(field: string, value: unknown): Provenance | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidInput(`${field} must be an object { messageIds?, source? }, got ${describe(value)}`)
  const o = checkOptions(field, value as Provenance, ['messageIds', 'source'])
  const out: Provenance = {}
  if (o.messageIds !== undefined) {
    if (!Array.isArray(o.messageIds)) throw invalidInput(`${field}.messageIds must be an array of ids`)
    if (o.messageIds.length > MAX_PROVENANCE_MESSAGES)
      throw new MemoryError('limit_exceeded', `${field}.messageIds holds ${o.messageIds.length} ids, more than ${MAX_PROVENANCE_MESSAGES}`)
    out.messageIds = [...new Set(o.messageIds.map((id, i) => checkId(`${field}.messageIds[${i}]`, id)))]
  }
  if (o.source !== undefined) out.source = checkWellFormed(`${field}.source`, checkString(`${field}.source`, o.source, { nonEmpty: true, maxLength: 200 }))
  return out
}

/** Checks a window: `validTo` not before `validFrom`. @throws MemoryError `invalid_input`. */
export function checkWindow(validFrom: number, validTo: number | undefined): void {
  if (validTo !== undefined && validTo < validFrom)
    throw invalidInput(`validTo (${new Date(validTo).toISOString()}) is before validFrom (${new Date(validFrom).toISOString()})`)
}

/** Checks the input of `relations.add`. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkRelationInput(field: string, input: unknown): CheckedRelation {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalidInput(`${field} must be an object { subject, predicate, object | value }, got ${describe(input)}`)
  const o = checkOptions(field, input as RelationInput, ['subject', 'predicate', 'object', 'value', 'validFrom', 'validTo', 'confidence', 'provenance'])
  const out: CheckedRelation = {
    subject: checkId(`${field}.subject`, o.subject),
    predicate: checkPredicate(`${field}.predicate`, o.predicate),
    confidence: o.confidence === undefined ? 1 : checkNumber(`${field}.confidence`, o.confidence, { min: 0, max: 1 }),
  }
  if ((o.object === undefined) === (o.value === undefined)) throw invalidInput(`${field} needs exactly one of object (an entity id) and value (a literal)`)
  if (o.object !== undefined) out.object = checkId(`${field}.object`, o.object)
  if (o.value !== undefined) out.value = checkLiteral(`${field}.value`, o.value)
  if (o.validFrom !== undefined) out.validFrom = checkTime(`${field}.validFrom`, o.validFrom)
  if (o.validTo !== undefined) out.validTo = checkTime(`${field}.validTo`, o.validTo)
  if (out.validFrom !== undefined) checkWindow(out.validFrom, out.validTo)
  const provenance = checkProvenance(`${field}.provenance`, o.provenance)
  if (provenance) out.provenance = provenance
  return out
}
