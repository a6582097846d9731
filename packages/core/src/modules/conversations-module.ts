import { type MemoryModule, storeOf } from '../module.js'
import { createMessageEdits } from '../message-edits.js'
import { createMessages } from '../messages.js'
import { createSessions } from '../sessions.js'
import { createSummaries } from '../summaries.js'

/** Conversation sessions, their messages, and session and project summaries (summaries sync). */
export function conversationsModule(): MemoryModule<'sessions' | 'messages' | 'summaries'> {
  return {
    name: 'conversations',
    tables: ['sessions', 'messages', 'summaries'],
    create(c) {
      const ctx = storeOf(c)
      return { sessions: createSessions(ctx), messages: { ...createMessages(ctx), ...createMessageEdits(ctx) }, summaries: createSummaries(ctx) }
    },
  }
}
