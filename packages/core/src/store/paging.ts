import { invalidInput } from './errors.js'
import { checkLimit, checkOptions } from './validate.js'

/**
 * One page of a list that can be long. Pass `next` back as `after` to get the
 * following page; no `next` means this was the last page.
 */
export interface Page<T, C = string> {
  items: T[]
  next?: C
}

/** Paging options shared by every long list: a cursor from a previous page's `next`, and a page size. */
export interface PageOptions<C = string> {
  /** The `next` of the previous page; omitted for the first page. */
  after?: C
  /** Items per page (default 100, at most 10,000). */
  limit?: number
}

/** Default page size of every long list. */
export const DEFAULT_PAGE_SIZE = 100

/**
 * Checks `options` (allowed fields plus `after` and `limit`) and returns them
 * with the limit resolved. String cursors must be non-empty strings.
 * @throws MemoryError `invalid_input` on unknown fields, a bad cursor or limit.
 */
export function checkPageOptions<T extends PageOptions<string>>(
  options: T | undefined,
  allowed: readonly (keyof T & string)[],
): Partial<T> & { limit: number } {
  const o = checkOptions('options', options, [...allowed, 'after', 'limit'] as (keyof T & string)[])
  if (o.after !== undefined && (typeof o.after !== 'string' || o.after === '')) throw invalidInput('options.after must be the `next` of a previous page')
  return { ...o, limit: checkLimit('options.limit', o.limit, DEFAULT_PAGE_SIZE) }
}

/** Makes a page from rows fetched with `limit + 1`: the extra row only says that more follow. */
export function pageFrom<T, C>(rows: readonly T[], limit: number, cursorOf: (item: T) => C): Page<T, C> {
  const items = rows.slice(0, limit)
  return rows.length > limit ? { items, next: cursorOf(items[items.length - 1]!) } : { items }
}

/** A cursor for a list ordered by a number, then a string id (e.g. newest first). */
export function encodeCursor(at: number, id: string): string {
  return `${at}~${id}`
}

/**
 * Reads a cursor made by {@link encodeCursor}.
 * @throws MemoryError `invalid_input` when it is not one.
 */
export function decodeCursor(cursor: string): { at: number; id: string } {
  const cut = cursor.indexOf('~')
  const at = Number(cursor.slice(0, cut))
  if (cut < 1 || !Number.isFinite(at)) throw invalidInput('options.after must be the `next` of a previous page')
  return { at, id: cursor.slice(cut + 1) }
}

/** True when a row at (`at`, `id`) comes after `cursor` in a list ordered by `at` then `id`, descending. */
export function isAfterDescending(at: number, id: string, cursor: { at: number; id: string } | undefined): boolean {
  return cursor === undefined || at < cursor.at || (at === cursor.at && id < cursor.id)
}

/** True when a row at (`at`, `id`) comes after `cursor` in a list ordered by `at` then `id`, ascending. */
export function isAfterAscending(at: number, id: string, cursor: { at: number; id: string } | undefined): boolean {
  return cursor === undefined || at > cursor.at || (at === cursor.at && id > cursor.id)
}
