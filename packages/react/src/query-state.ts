import type { MemoryError } from '@engram/core'

/**
 * What a memory hook returns: the data once loaded, or the error of the last
 * attempt (never thrown into render), and whether a first load is pending.
 * The object is the same between renders until the data or error changes.
 */
export interface QueryState<T> {
  /** The result of the query; undefined until the first load. */
  readonly data: T | undefined
  /** The failure of the last load, as a `MemoryError` with a code. */
  readonly error: MemoryError | undefined
  /** True until the first load settles (and always on the server). */
  readonly loading: boolean
}

/** The state of every query before it loads (one object, so snapshots compare equal). */
export const LOADING: QueryState<never> = Object.freeze({ data: undefined, error: undefined, loading: true })

/** A loaded state. */
export function ready<T>(data: T): QueryState<T> {
  return { data, error: undefined, loading: false }
}

/** A failed state; the last good data stays visible. */
export function failed<T>(error: MemoryError, data: T | undefined): QueryState<T> {
  return { data, error, loading: false }
}
