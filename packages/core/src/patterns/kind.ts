import { defineKind } from '../store/kind.js'

/** Patterns: id = patternId(projectId, normalised text); synced like facts. */
export const patternsKind = defineKind({
  name: 'patterns',
  uses: ['projects', 'runtime'],
  tables: { patterns: { 3: 'id, projectId, [projectId+confidence]' } },
  mirrored: { when: 'always', document: 'project', identity: 'id', descriptor: async () => (await import('./patterns-sync.js')).syncedPatterns },
  dump: { projectRows: true },
  encryption: { hashed: { patterns: ['id'] } },
})
