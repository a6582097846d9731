import { defineKind } from '../store/kind.js'

/** Summaries: of a session, a project, or rolling. */
export const summariesKind = defineKind({
  name: 'summaries',
  uses: ['projects'],
  tables: { summaries: { 1: 'id, [projectId+createdAt], [projectId+kind+createdAt], [sessionId+createdAt]' } },
  changeKinds: ['summaries'],
  namespaces: ['summaries'],
  mirrored: { when: 'always', document: 'project', descriptor: async () => (await import('./summaries-sync.js')).syncedSummaries },
  dump: { tables: ['summaries'], projectRows: ['summaries'] },
  searchDocs: ['summary'],
})
