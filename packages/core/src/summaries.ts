import { pending } from './pending.js'
import type { StoreContext } from './store-context.js'

/** A session or project summary. */
export interface Summary { id: string; projectId: string; sessionId?: string; kind: 'session' | 'project'; text: string; coversUntil?: number; createdAt: number }

/** Summaries of sessions and projects. */
export interface SummariesApi {
  write(summary: { projectId: string; sessionId?: string; kind: 'session' | 'project'; text: string; coversUntil?: number }): Promise<Summary>
  latest(projectId: string, options?: { sessionId?: string; kind?: 'session' | 'project' }): Promise<Summary | undefined>
  list(projectId: string, options?: { kind?: 'session' | 'project'; limit?: number }): Promise<Summary[]>
}

/** Creates the summaries namespace of a store. */
export function createSummaries(ctx: StoreContext): SummariesApi {
  return pending('summaries', ctx)
}
