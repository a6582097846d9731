import { defineKind } from '../store/kind.js'

/** Summaries: of a session, a project, or rolling. */
export const summariesKind = defineKind({
  name: 'summaries',
  uses: ['projects'],
  tables: { summaries: { 1: 'id, [projectId+createdAt], [projectId+kind+createdAt], [sessionId+createdAt]' } },
  mirrored: { when: 'always', document: 'project', identity: 'id', descriptor: async () => (await import('./summaries-sync.js')).syncedSummaries },
  dump: { projectRows: true },
  searchDocs: ['summary'],
})
