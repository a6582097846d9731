import { defineKind } from '../store/kind.js'

/** Facts: key → JSON value per project, with every version kept (`factVersions`). */
export const factsKind = defineKind({
  name: 'facts',
  uses: ['projects', 'blocks'],
  tables: {
    facts: { 1: '[projectId+key], id, [projectId+deletedAt], *tagKeys' },
    factVersions: { 1: '[projectId+key+version], [projectId+key+validFrom]' },
  },
  changeKinds: ['facts'],
  namespaces: ['facts'],
  mirrored: { when: 'always', document: 'project', descriptor: async () => (await import('./facts-sync.js')).syncedFacts },
  dump: { tables: ['facts', 'factVersions'], projectRows: ['facts', 'factVersions'] },
  encryption: { hashed: { facts: ['key', 'id', 'tagKeys'], factVersions: ['key'] } },
  searchDocs: ['fact'],
})
