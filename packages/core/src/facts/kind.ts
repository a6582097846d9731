import { defineKind } from '../store/kind.js'

/** Facts: key → JSON value per project, with every version kept (`factVersions`). */
export const factsKind = defineKind({
  name: 'facts',
  uses: ['projects', 'blocks'],
  tables: {
    // Version 10: facts that expire, found by the expiry sweep.
    facts: { 1: '[projectId+key], id, [projectId+deletedAt], *tagKeys', 10: '[projectId+key], id, [projectId+deletedAt], *tagKeys, expiresAt' },
    factVersions: { 1: '[projectId+key+version], [projectId+key+validFrom]' },
  },
  mirrored: { when: 'always', document: 'project', identity: 'key', descriptor: async () => (await import('./facts-sync.js')).syncedFacts },
  dump: { projectRows: true },
  encryption: { hashed: { facts: ['key', 'id', 'tagKeys'], factVersions: ['key'] } },
  searchDocs: ['fact'],
})
