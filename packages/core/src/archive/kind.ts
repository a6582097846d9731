import { defineKind } from '../store/kind.js'

/** The archive: passages with optional embeddings, found by hybrid search. */
export const archiveKind = defineKind({
  name: 'archive',
  uses: ['projects', 'facts'],
  // Version 10: passages that expire, found by the expiry sweep.
  tables: { passages: { 1: 'id, [projectId+createdAt]', 10: 'id, [projectId+createdAt], expiresAt' } },
  changeKinds: ['passages'],
  dump: { projectRows: true },
  searchDocs: ['passage'],
})
