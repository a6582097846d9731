import type { StoreContext } from '../store/store-context.js'
import { predicateKey, predicatesOf } from './predicate-options.js'

export { checkPredicates, PREDICATES_META_KEY, predicateKey, type Predicates, predicatesOf, registerPredicates } from './predicate-options.js'

export type { Cardinality } from './predicate-options.js'

/**
 * Predicates that are single-valued unless the app says otherwise: at any time a person works
 * at one place, lives in one, and so on. Every other predicate is multi-valued.
 */
export const SINGLE_VALUED: readonly string[] = [
  'works_at',
  'employed_by',
  'employer',
  'lives_in',
  'resides_in',
  'located_in',
  'based_in',
  'married_to',
  'spouse',
  'partner_of',
  'job_title',
  'role',
  'title',
  'reports_to',
  'manager',
  'managed_by',
  'status',
  'age',
  'timezone',
  'headquartered_in',
  'ceo',
  'owned_by',
  'studies_at',
]

const single = new Set(SINGLE_VALUED)

/** The cardinality of a predicate in a store. */
export function cardinalityOf(ctx: StoreContext, predicate: string): 'one' | 'many' {
  const key = predicateKey(predicate)
  return predicatesOf(ctx).overrides.get(key) ?? (single.has(key) ? 'one' : 'many')
}
