import { defineKind } from '../store/kind.js'

/**
 * Entities: named things of a type (person, place, organisation, project, or an app's own) with
 * aliases and observations, per project. An entity's id is made of (projectId, type, normalised
 * name), so the same thing named on two devices is one record; merged ones point at the entity
 * they were merged into.
 */
export const entitiesKind = defineKind({
  name: 'entities',
  uses: ['projects', 'relations'],
  tables: { entities: { 10: 'id, [projectId+type], *nameKeys, mergedInto' } },
  mirrored: { when: 'always', document: 'project', identity: 'id', descriptor: async () => (await import('./entities-sync.js')).syncedEntities },
  dump: { projectRows: true },
  encryption: { hashed: { entities: ['id', 'type', 'nameKeys', 'mergedInto'] } },
  searchDocs: ['entity'],
})
