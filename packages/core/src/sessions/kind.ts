import { defineKind } from '../store/kind.js'

/** Sessions: the conversations of a project (their messages are the messages kind). */
export const sessionsKind = defineKind({
  name: 'sessions',
  uses: ['projects', 'people', 'summaries', 'messages', 'observations'],
  tables: { sessions: { 1: 'id, [projectId+lastActiveAt], [status+lastActiveAt]' } },
  mirrored: { when: 'conversations', document: 'project', identity: 'id', descriptor: async () => (await import('./sessions-sync.js')).syncedSessions },
  dump: { projectRows: true },
})
