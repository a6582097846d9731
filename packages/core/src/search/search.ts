import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'

/** The kind of memory a search hit comes from. */
export type HitKind = 'message' | 'fact' | 'summary' | 'passage'
/** One search result. */
export interface Hit { kind: HitKind; id: string; projectId: string; sessionId?: string; text: string; score: number; createdAt: number }
/** Options of `memory.search`. */
export interface SearchOptions { kinds?: HitKind[]; limit?: number; mode?: 'hybrid' | 'text' | 'vector'; sessionId?: string; excludeSessionId?: string }
/** `memory.search(projectId, query, options)`. */
export type SearchFn = (projectId: string, query: string, options?: SearchOptions) => Promise<Hit[]>

/** Creates the search function of a store. */
export function createSearch(ctx: StoreContext): SearchFn {
  return (...args) => pending<{ search: SearchFn }>('search', ctx).search(...args)
}
