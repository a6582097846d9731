import { defineKind } from '../store/kind.js'

/** Patterns: id = patternId(projectId, normalised text); synced like facts. */
export const patternsKind = defineKind({
  name: 'patterns',
  uses: ['projects', 'runtime'],
  tables: { patterns: { 3: 'id, projectId, [projectId+confidence]' } },
  changeKinds: ['patterns'],
  namespaces: ['patterns'],
  mirrored: { when: 'always', document: 'project', descriptor: async () => (await import('./patterns-sync.js')).syncedPatterns },
  dump: { tables: ['patterns'], projectRows: ['patterns'] },
  encryption: { hashed: { patterns: ['id'] } },
})
