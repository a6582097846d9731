import { invalidInput, MemoryError } from './errors.js'

/** A JSON value: what facts, payloads and metadata may hold. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Longest id or key we accept (characters). */
export const MAX_ID_LENGTH = 512
/** Largest JSON value we accept by default (bytes of its JSON text). */
export const MAX_VALUE_BYTES = 1024 * 1024

const encoder = new TextEncoder()
/** A UTF-16 surrogate without its pair: with the `u` flag a pair is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/**
 * Checks a required id-like string: non-empty, trimmed, not too long, and
 * well-formed Unicode. Ids and keys become index keys, URI-encoded record ids
 * and room names, and travel UTF-8 encoded: a lone surrogate has no UTF-8 form
 * (`encodeURIComponent` throws, a text encoder writes U+FFFD), so two devices
 * would not agree on it.
 * @throws MemoryError `invalid_input` naming the field.
 */
export function checkId(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidInput(`${name} must be a non-empty string, got ${describe(value)}`)
  }
  if (value.length > MAX_ID_LENGTH) throw invalidInput(`${name} is longer than ${MAX_ID_LENGTH} characters`)
  if (value.trim() !== value) throw invalidInput(`${name} must not start or end with whitespace: ${JSON.stringify(value)}`)
  checkWellFormed(name, value)
  return value
}

/**
 * Checks that a string that names something (an id, a key, a text a record id is made of) is
 * well-formed Unicode: no lone surrogate. @throws MemoryError `invalid_input` naming the field.
 */
export function checkWellFormed(name: string, value: string): string {
  const bad = LONE_SURROGATE.exec(value)
  if (bad) {
    const unit = bad[0].charCodeAt(0).toString(16).toUpperCase()
    throw invalidInput(`${name} holds a lone surrogate (U+${unit} at index ${bad.index}): ids and keys must be well-formed Unicode`)
  }
  return value
}

/** Checks a required string (may be empty unless `nonEmpty`), at most `maxLength` characters. */
export function checkString(name: string, value: unknown, opts: { nonEmpty?: boolean; maxLength?: number } = {}): string {
  if (typeof value !== 'string') throw invalidInput(`${name} must be a string, got ${describe(value)}`)
  if (opts.nonEmpty && value.trim().length === 0) throw invalidInput(`${name} must not be empty`)
  if (opts.maxLength !== undefined && value.length > opts.maxLength) {
    throw new MemoryError('limit_exceeded', `${name} is ${value.length} characters, more than the limit of ${opts.maxLength}`)
  }
  return value
}

/** Checks an optional string; `undefined` passes through. */
export function checkOptionalString(name: string, value: unknown, maxLength?: number): string | undefined {
  if (value === undefined) return undefined
  return checkString(name, value, maxLength === undefined ? {} : { maxLength })
}

/** Checks a finite number, optionally within [min, max]. */
export function checkNumber(name: string, value: unknown, range: { min?: number; max?: number; integer?: boolean } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidInput(`${name} must be a finite number, got ${describe(value)}`)
  if (range.integer && !Number.isInteger(value)) throw invalidInput(`${name} must be an integer, got ${value}`)
  if (range.min !== undefined && value < range.min) throw invalidInput(`${name} must be ≥ ${range.min}, got ${value}`)
  if (range.max !== undefined && value > range.max) throw invalidInput(`${name} must be ≤ ${range.max}, got ${value}`)
  return value
}

/** Checks an optional number; `undefined` passes through. */
export function checkOptionalNumber(name: string, value: unknown, range: { min?: number; max?: number; integer?: boolean } = {}): number | undefined {
  return value === undefined ? undefined : checkNumber(name, value, range)
}

/** The latest time a `Date` can hold (epoch ms): later times have no calendar. */
export const MAX_TIME = 8_640_000_000_000_000

/** Checks an epoch-milliseconds time: an integer in [0, {@link MAX_TIME}]. @throws MemoryError `invalid_input`. */
export function checkTime(name: string, value: unknown): number {
  return checkNumber(name, value, { min: 0, max: MAX_TIME, integer: true })
}

/** Checks a paging limit (positive integer, capped). */
export function checkLimit(name: string, value: unknown, fallback: number, max = 10_000): number {
  if (value === undefined) return fallback
  return checkNumber(name, value, { min: 1, max, integer: true })
}

/** Checks a paging offset. */
export function checkOffset(value: unknown): number {
  if (value === undefined) return 0
  return checkNumber('offset', value, { min: 0, integer: true })
}

/**
 * Checks an options bag: undefined or a plain object. With `allowed`, a field not in
 * that list (and not undefined) is rejected, so a misspelt option fails loudly instead
 * of being ignored.
 * @throws MemoryError `invalid_input`.
 */
export function checkOptions<T extends object>(name: string, value: T | undefined, allowed?: readonly (keyof T & string)[]): Partial<T> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidInput(`${name} must be an object, got ${describe(value)}`)
  if (allowed !== undefined) {
    for (const [field, v] of Object.entries(value)) {
      if (v !== undefined && !(allowed as readonly string[]).includes(field)) {
        throw invalidInput(`${name} has an unknown field ${JSON.stringify(field)}; allowed: ${allowed.join(', ')}`)
      }
    }
  }
  return value
}

/** Checks one of a fixed set of strings. */
export function checkOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalidInput(`${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(value)}`)
  }
  return value as T
}

/** Checks a list of tags: unique non-empty strings, returned sorted. */
export function checkTags(value: unknown): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw invalidInput(`tags must be an array of strings, got ${describe(value)}`)
  for (const tag of value) checkId('tag', tag)
  return [...new Set(value as string[])].sort()
}

/**
 * Checks that `value` is plain JSON (no undefined, functions, class instances,
 * NaN, cycles) and at most `maxBytes` as JSON text. Returns its JSON text size.
 */
export function checkJson(name: string, value: unknown, maxBytes = MAX_VALUE_BYTES): number {
  checkJsonShape(name, value, new Set())
  const size = encoder.encode(JSON.stringify(value)).length
  if (size > maxBytes) throw new MemoryError('limit_exceeded', `${name} is ${size} bytes as JSON, more than the limit of ${maxBytes}`)
  return size
}

function checkJsonShape(path: string, value: unknown, seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) throw invalidInput(`${path} is not JSON: ${value} is not a finite number`)
      return
    case 'object': {
      if (value === null) return
      if (seen.has(value)) throw invalidInput(`${path} is not JSON: it contains a cycle`)
      const proto = Object.getPrototypeOf(value)
      if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
        throw invalidInput(`${path} is not JSON: ${proto?.constructor?.name ?? 'object'} instances are not plain data`)
      }
      seen.add(value)
      if (Array.isArray(value)) for (const [i, item] of value.entries()) checkJsonShape(`${path}[${i}]`, item, seen)
      else for (const [k, v] of Object.entries(value)) checkJsonShape(`${path}.${k}`, v, seen)
      seen.delete(value)
      return
    }
    default:
      throw invalidInput(`${path} is not JSON: got ${typeof value}`)
  }
}

/** A short description of a bad value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
  return typeof value
}
