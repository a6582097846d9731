import type { Page } from '@engram/core'

/**
 * Reads every page of a paged list, passing each page's `next` back as
 * `after`. Fails when a page other than the last is empty or the cursor
 * repeats (a list that would page forever).
 */
export async function readAllPages<T, C>(fetch: (after: C | undefined) => Promise<Page<T, C>>): Promise<{ pages: T[][]; items: T[] }> {
  const pages: T[][] = []
  const cursors = new Set<C>()
  let after: C | undefined
  for (;;) {
    const page = await fetch(after)
    pages.push(page.items)
    if (page.next === undefined) break
    if (page.items.length === 0) throw new Error('a page with a next cursor has no items')
    if (cursors.has(page.next)) throw new Error(`cursor ${String(page.next)} repeats`)
    cursors.add(page.next)
    after = page.next
  }
  return { pages, items: pages.flat() }
}
