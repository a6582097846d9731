import type { ListSessionsOptions, Message, Page, Session } from '@engram/core'
import type { QueryState } from './query-state.js'
import { useMemoryQuery } from './use-memory-query.js'

/** A project's sessions, newest activity first, one page (`sessions.list`), kept current. */
export function useSessions(projectId: string, options: ListSessionsOptions = {}): QueryState<Page<Session>> {
  return useMemoryQuery({
    key: `sessions.list\u0000${projectId}\u0000${JSON.stringify(options)}`,
    load: (m) => m.sessions.list(projectId, options),
    source: { changes: { projectId, kinds: ['sessions'] } },
  })
}

/** Options of {@link useMessages}. */
export interface UseMessagesOptions {
  /** How many of the latest messages (default 50, at most 10,000). */
  limit?: number
}

/** The latest messages of a session, oldest first (`messages.tail`), kept current. */
export function useMessages(sessionId: string, options: UseMessagesOptions = {}): QueryState<Message[]> {
  const limit = options.limit ?? 50
  return useMemoryQuery({
    key: `messages.tail\u0000${sessionId}\u0000${limit}`,
    load: (m) => m.messages.tail(sessionId, limit),
    // Message changes name no session: any message write reloads, and only a changed tail re-renders.
    source: { changes: { kinds: ['messages', 'sessions'] } },
  })
}
