import { pending } from './pending.js'
import type { StoreContext } from './store-context.js'

/** Counts and approximate size of a store or project. */
export interface Stats { facts: number; blocks: number; sessions: number; messages: number; passages: number; bytes: number }
/** A JSON-safe, versioned export of a store or one project. */
export interface Dump { format: 'engram-dump'; version: number; exportedAt: number; projectId?: string; tables: Record<string, unknown[]> }

/** stats, export and import of a store. */
export interface DumpApi {
  stats(projectId?: string): Promise<Stats>
  export(projectId?: string): Promise<Dump>
  import(dump: Dump, options: { mode: 'merge' | 'replace' }): Promise<{ written: number }>
}

/** Creates stats/export/import for a store. */
export function createDump(ctx: StoreContext): DumpApi {
  return pending('dump', ctx)
}
