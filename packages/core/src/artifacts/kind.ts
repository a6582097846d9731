import { defineKind } from '../store/kind.js'

/** Artifacts: metadata and the Blob (when on this device). */
export const artifactsKind = defineKind({
  name: 'artifacts',
  uses: ['projects'],
  tables: { artifacts: { 3: 'id, [projectId+createdAt], runId' } },
  mirrored: { when: 'always', document: 'project', identity: 'id', descriptor: async () => (await import('./artifacts-sync.js')).syncedArtifacts },
  dump: { projectRows: true },
  // A Blob cannot be read synchronously, so it is kept clear (docs/encryption.md).
  encryption: { clear: { artifacts: ['data'] } },
})
