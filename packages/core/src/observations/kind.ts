import { defineKind } from '../store/kind.js'

/**
 * Observations: dated, prioritised notes an observer wrote of a session's older messages, and the
 * reflections that condensed them. They travel with the session's conversation (projects whose
 * conversations sync), in the project document.
 */
export const observationsKind = defineKind({
  name: 'observations',
  uses: ['sessions', 'messages'],
  tables: { observations: { 10: 'id, [sessionId+createdAt], projectId, expiresAt' } },
  mirrored: {
    when: 'conversations',
    document: 'project',
    identity: 'id',
    descriptor: async () => (await import('./observations-sync.js')).syncedObservations,
  },
  dump: { projectRows: true },
  searchDocs: ['observation'],
})
