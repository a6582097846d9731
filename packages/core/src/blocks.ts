import { pending } from './pending.js'
import type { StoreContext } from './store-context.js'

/** A MemGPT-style core block: labelled text with a character limit. */
export interface Block { projectId: string; label: string; value: string; limit: number; description?: string; readOnly: boolean; updatedAt: number }
/** Options of {@link BlocksApi.set}. */
export interface SetBlockOptions { limit?: number; description?: string; readOnly?: boolean }

/** Core blocks of a project. */
export interface BlocksApi {
  get(projectId: string, label: string): Promise<Block | undefined>
  set(projectId: string, label: string, value: string, options?: SetBlockOptions): Promise<Block>
  append(projectId: string, label: string, text: string): Promise<Block>
  replace(projectId: string, label: string, oldText: string, newText: string): Promise<boolean>
  delete(projectId: string, label: string): Promise<boolean>
  list(projectId: string): Promise<Block[]>
}

/** Creates the blocks namespace of a store. */
export function createBlocks(ctx: StoreContext): BlocksApi {
  return pending('blocks', ctx)
}
