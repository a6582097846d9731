import { defineKind } from '../store/kind.js'

/** Artifacts: metadata and the Blob (when on this device). */
export const artifactsKind = defineKind({
  name: 'artifacts',
  uses: ['projects'],
  tables: { artifacts: { 3: 'id, [projectId+createdAt], runId' } },
  changeKinds: ['artifacts'],
  namespaces: ['artifacts'],
  mirrored: { when: 'always', document: 'project', descriptor: async () => (await import('./artifacts-sync.js')).syncedArtifacts },
  dump: { tables: ['artifacts'], projectRows: ['artifacts'] },
  // A Blob cannot be read synchronously, so it is kept clear (docs/encryption.md).
  encryption: { clear: { artifacts: ['data'] } },
})
