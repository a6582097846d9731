/**
 * The `filter` of a store search, as LangGraph's `InMemoryStore` reads it:
 * each top-level field of the item's value must equal the filter's value, or
 * pass its operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$nin`).
 * Comparisons are strict (`===`), order operators compare as numbers.
 */

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin'])

/** True when `value` passes every condition of `filter`. */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (filter === undefined) return true
  return Object.entries(filter).every(([field, condition]) => matchesCondition(value[field], condition))
}

function matchesCondition(actual: unknown, condition: unknown): boolean {
  if (!isOperators(condition)) return actual === condition
  return Object.entries(condition).every(([op, expected]) => {
    switch (op) {
      case '$eq':
        return actual === expected
      case '$ne':
        return actual !== expected
      case '$gt':
        return Number(actual) > Number(expected)
      case '$gte':
        return Number(actual) >= Number(expected)
      case '$lt':
        return Number(actual) < Number(expected)
      case '$lte':
        return Number(actual) <= Number(expected)
      case '$in':
        return Array.isArray(expected) && expected.includes(actual)
      case '$nin':
        return !Array.isArray(expected) || !expected.includes(actual)
      default:
        return false
    }
  })
}

function isOperators(condition: unknown): condition is Record<string, unknown> {
  return typeof condition === 'object' && condition !== null && !Array.isArray(condition) && Object.keys(condition).every((k) => OPERATORS.has(k))
}
