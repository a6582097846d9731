import { defineKind } from '../store/kind.js'

/**
 * Relations: subject — predicate — object (an entity or a literal) with a validity window,
 * provenance and confidence. Each record is one assertion; the windows a single-valued predicate
 * closes are derived from the assertions when read, so devices holding the same assertions agree.
 */
export const relationsKind = defineKind({
  name: 'relations',
  uses: ['projects', 'entities', 'people'],
  tables: { relations: { 10: 'id, projectId, subjectId, objectId' } },
  mirrored: { when: 'always', document: 'project', identity: 'id', descriptor: async () => (await import('./relations-sync.js')).syncedRelations },
  dump: { projectRows: true },
  encryption: { hashed: { relations: ['id', 'subjectId', 'objectId'] } },
  searchDocs: ['relation'],
})
