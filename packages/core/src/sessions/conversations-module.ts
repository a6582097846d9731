import { type MemoryModule, storeOf } from '../store/module.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { createMessages } from '../messages/messages.js'
import { createSessions } from './sessions.js'

/** Conversation sessions, their messages, and session and project summaries (summaries sync). */
export function conversationsModule(): MemoryModule<'sessions' | 'messages' | 'summaries'> {
  return {
    name: 'conversations',
    tables: ['sessions', 'messages', 'summaries'],
    create(c) {
      const ctx = storeOf(c)
      // Editing and deleting messages is rare: its code loads on first call.
      const edits = loadOnUse('message edits', async () => (await import('../messages/message-edits.js')).createMessageEdits(ctx))
      // Summaries are written and read now and then (context.build reads them itself): loaded on first call too.
      const summaries = loadOnUse('summaries', async () => (await import('../summaries/summaries.js')).createSummaries(ctx))
      return {
        sessions: createSessions(ctx),
        messages: { ...createMessages(ctx), ...methodsOnUse(edits, ['edit', 'delete']) },
        summaries: methodsOnUse(summaries, ['create', 'latest', 'list']),
      }
    },
  }
}
