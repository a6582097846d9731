import type { RelationRow } from './relation-rows.js'

/** The derived end of one assertion: when the next assertion of its chain began, and which. */
export interface DerivedClose {
  closedAt?: number
  closedBy?: string
}

/**
 * The order of a chain: by `validFrom`, then id (every device sorts alike). Both never change
 * once written (an id is time-sorted, made where the assertion was made); a clock stamp would
 * not do, since ending or moving an assertion stamps it anew.
 */
export function chainOrder(a: Pick<RelationRow, 'validFrom' | 'id'>, b: Pick<RelationRow, 'validFrom' | 'id'>): number {
  return a.validFrom - b.validFrom || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

/**
 * The convergence rule of a single-valued predicate. The live assertions of one subject and
 * predicate form a chain sorted by {@link chainOrder}; each is closed at the `validFrom` of the
 * one after it (and by no other), the last stays open unless its writer ended it. The windows
 * are a function of the set of assertions alone: devices that hold the same assertions, in
 * whatever order they received them, derive the same windows. A deleted assertion leaves the
 * chain, so the one before it is closed by the one after (or reopens).
 *
 * @returns the derived close of every live row (`{}` for the last), by id.
 */
export function deriveChain(rows: readonly RelationRow[]): Map<string, DerivedClose> {
  const live = rows.filter((r) => r.deletedAt === undefined).sort(chainOrder)
  const out = new Map<string, DerivedClose>()
  live.forEach((row, i) => {
    const next = live[i + 1]
    out.set(row.id, next ? { closedAt: next.validFrom, closedBy: next.id } : {})
  })
  return out
}
