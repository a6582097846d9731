import { defineKind } from '../store/kind.js'

/** The archive: passages with optional embeddings, found by hybrid search. */
export const archiveKind = defineKind({
  name: 'archive',
  uses: ['projects', 'facts'],
  tables: { passages: { 1: 'id, [projectId+createdAt]' } },
  changeKinds: ['passages'],
  namespaces: ['archive'],
  dump: { tables: ['passages'], projectRows: ['passages'] },
  searchDocs: ['passage'],
})
