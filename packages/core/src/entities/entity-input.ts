import { invalidInput, MemoryError } from '../store/errors.js'
import { checkOptions, checkString, checkWellFormed, describe } from '../store/validate.js'
import { nameKey } from './entity-rows.js'
import { checkProvenance } from '../relations/relation-input.js'
import type { Provenance } from '../relations/relation-rows.js'

/** Longest entity name or alias (characters). */
export const MAX_ENTITY_NAME = 200
/** Longest entity type (characters). */
export const MAX_ENTITY_TYPE = 64
/** Longest observation (characters). */
export const MAX_OBSERVATION = 2_000
/** Most observations one entity holds. */
export const MAX_OBSERVATIONS = 1_000
/** Most aliases one entity holds. */
export const MAX_ALIASES = 100

/** What `entities.upsert` takes. */
export interface EntityInput {
  name: string
  /** `person`, `place`, `organisation`, `project`, or the app's own type. */
  type: string
  aliases?: string[]
  observations?: string[]
  /** Where what this write adds was learned (message ids, source); its message ids join the entity's. */
  provenance?: Provenance
}

/** Checks a name or alias: a trimmed, well-formed string with letters or digits. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkName(field: string, value: unknown, max = MAX_ENTITY_NAME): string {
  const s = checkWellFormed(field, checkString(field, value, { nonEmpty: true, maxLength: max }).trim())
  if (nameKey(s) === '') throw invalidInput(`${field} needs letters or digits, got ${JSON.stringify(s)}`)
  return s
}

/** Checks an entity type. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkType(field: string, value: unknown): string {
  return checkName(field, value, MAX_ENTITY_TYPE)
}

/** Checks a list of strings with `each`, dropping exact repeats. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkList(field: string, value: unknown, max: number, each: (field: string, v: unknown) => string): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw invalidInput(`${field} must be an array of strings, got ${describe(value)}`)
  if (value.length > max) throw new MemoryError('limit_exceeded', `${field} holds ${value.length} entries, more than ${max}`)
  return [...new Set(value.map((v, i) => each(`${field}[${i}]`, v)))]
}

/** Checks an observation text. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkObservation(field: string, value: unknown): string {
  return checkWellFormed(field, checkString(field, value, { nonEmpty: true, maxLength: MAX_OBSERVATION }).trim())
}

/** Checks the input of `entities.upsert`. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkEntityInput(input: unknown): Required<Omit<EntityInput, 'provenance'>> & Pick<EntityInput, 'provenance'> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalidInput(`entity must be an object { name, type }, got ${describe(input)}`)
  const o = checkOptions('entity', input as EntityInput, ['name', 'type', 'aliases', 'observations', 'provenance'])
  const name = checkName('entity.name', o.name)
  const type = checkType('entity.type', o.type)
  const aliases = checkList('entity.aliases', o.aliases, MAX_ALIASES, checkName).filter((a) => nameKey(a) !== nameKey(name))
  const observations = checkList('entity.observations', o.observations, MAX_OBSERVATIONS, checkObservation)
  const provenance = checkProvenance('entity.provenance', o.provenance)
  return { name, type, aliases, observations, ...(provenance ? { provenance } : {}) }
}

/** Most message ids an entity's provenance keeps (the most recent). */
export const MAX_ENTITY_PROVENANCE = 100

/** An entity's provenance after a write that learned `added`: message ids joined (the most recent kept), the latest source. */
export function joinProvenance(stored: Provenance | undefined, added: Provenance | undefined): Provenance | undefined {
  if (!added) return stored
  const ids = [...new Set([...(stored?.messageIds ?? []), ...(added.messageIds ?? [])])].slice(-MAX_ENTITY_PROVENANCE)
  const source = added.source ?? stored?.source
  return { ...(ids.length > 0 ? { messageIds: ids } : {}), ...(source === undefined ? {} : { source }) }
}

/** Refuses an entity that would hold more aliases or observations than the limits. @throws MemoryError `limit_exceeded`. */
export function checkEntitySize(aliases: readonly string[], observations: readonly string[]): void {
  if (aliases.length > MAX_ALIASES)
    throw new MemoryError('limit_exceeded', `An entity holds at most ${MAX_ALIASES} aliases (this one would hold ${aliases.length})`)
  if (observations.length > MAX_OBSERVATIONS)
    throw new MemoryError('limit_exceeded', `An entity holds at most ${MAX_OBSERVATIONS} observations (this one would hold ${observations.length})`)
}
