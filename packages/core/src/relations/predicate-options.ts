import { invalidInput } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { describe } from '../store/validate.js'

/*
 * What the knowledge module needs at open: checking the app's predicate declarations and
 * registering them with the store. Kept apart from the rest of the relations code, which loads
 * on first use.
 */

/** How many objects a subject has at once under a predicate: `one` (a new one closes the current), or `many` (they accumulate). */
export type Cardinality = 'one' | 'many'

/**
 * The key a predicate is compared by: case folded, spaces and hyphens as underscores, so
 * "Works at", "works-at" and "works_at" are one predicate.
 */
export function predicateKey(predicate: string): string {
  return predicate
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/[\s-]+/g, '_')
}

/** The cardinalities of a store: the built-in ones and the app's (`knowledgeModule({ predicates })`). */
export interface Predicates {
  readonly overrides: ReadonlyMap<string, Cardinality>
  /** A stable text of the overrides (stored: a change recomputes the stored windows). */
  readonly signature: string
}

/** The meta row holding the predicate declarations the stored windows were derived with. */
export const PREDICATES_META_KEY = 'knowledge:predicates'

const registered = new WeakMap<StoreContext, Predicates>()
const DEFAULTS: Predicates = { overrides: new Map(), signature: '' }

/** Checks the app's predicate declarations. @throws MemoryError `invalid_input`. */
export function checkPredicates(value: unknown): Predicates {
  if (value === undefined) return DEFAULTS
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidInput(`predicates must be an object { predicate: 'one' | 'many' }, got ${describe(value)}`)
  const overrides = new Map<string, Cardinality>()
  for (const [name, c] of Object.entries(value)) {
    const key = predicateKey(name)
    if (key === '' || key.length > 100) throw invalidInput(`predicates: ${JSON.stringify(name)} is not a predicate name`)
    if (c !== 'one' && c !== 'many') throw invalidInput(`predicates.${name} must be 'one' or 'many', got ${describe(c)}`)
    overrides.set(key, c)
  }
  const signature = [...overrides]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, c]) => `${k}=${c}`)
    .join(',')
  return { overrides, signature }
}

/** Registers a store's predicate declarations (the knowledge module does, at install). */
export function registerPredicates(ctx: StoreContext, predicates: Predicates): void {
  registered.set(ctx, predicates)
}

/** The store's predicate declarations (the built-in ones where none were registered). */
export function predicatesOf(ctx: StoreContext): Predicates {
  return registered.get(ctx) ?? DEFAULTS
}
