import { pending } from './pending.js'
import type { Source } from './schema.js'
import type { StoreContext } from './store-context.js'

/** An archive passage (long-term recall memory). */
export interface Passage { id: string; projectId: string; text: string; source?: Source; tags: string[]; createdAt: number }

/** The archive of passages. */
export interface ArchiveApi {
  insert(projectId: string, text: string, options?: { source?: Source; tags?: string[] }): Promise<Passage>
  remove(id: string): Promise<boolean>
}

/** Creates the archive namespace of a store. */
export function createArchive(ctx: StoreContext): ArchiveApi {
  return pending('archive', ctx)
}
