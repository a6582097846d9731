import { defineKind } from '../store/kind.js'

/** Sessions: the conversations of a project (their messages are the messages kind). */
export const sessionsKind = defineKind({
  name: 'sessions',
  uses: ['projects', 'people', 'summaries', 'messages'],
  tables: { sessions: { 1: 'id, [projectId+lastActiveAt], [status+lastActiveAt]' } },
  changeKinds: ['sessions'],
  namespaces: ['sessions'],
  mirrored: { when: 'conversations', document: 'project', descriptor: async () => (await import('./sessions-sync.js')).syncedSessions },
  dump: { tables: ['sessions'], projectRows: ['sessions'] },
})
