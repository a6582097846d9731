import { pending } from './pending.js'
import type { StoreContext } from './store-context.js'

/** A conversation session. */
export interface Session {
  id: string; projectId: string; title?: string; channel?: string; status: 'active' | 'closed'; summary?: string
  startedAt: number; lastActiveAt: number; closedAt?: number
}
/** Options of {@link SessionsApi.list}. */
export interface ListSessionsOptions { status?: 'active' | 'closed'; since?: number; until?: number; limit?: number; offset?: number }

/** Conversation sessions. */
export interface SessionsApi {
  start(projectId: string, options?: { title?: string; channel?: string; id?: string }): Promise<Session>
  get(id: string): Promise<Session | undefined>
  list(projectId: string, options?: ListSessionsOptions): Promise<Session[]>
  close(id: string, options?: { summary?: string }): Promise<boolean>
  idle(olderThanMs: number): Promise<Session[]>
}

/** Creates the sessions namespace of a store. */
export function createSessions(ctx: StoreContext): SessionsApi {
  return pending('sessions', ctx)
}
