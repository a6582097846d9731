import { defineKind } from '../store/kind.js'

/** Core blocks: label → text with a character limit, per project. */
export const blocksKind = defineKind({
  name: 'blocks',
  uses: ['projects'],
  tables: { blocks: { 1: '[projectId+label], projectId' } },
  changeKinds: ['blocks'],
  namespaces: ['blocks'],
  mirrored: { when: 'always', document: 'project', descriptor: async () => (await import('./blocks-sync.js')).syncedBlocks },
  dump: { tables: ['blocks'], projectRows: ['blocks'] },
  encryption: { hashed: { blocks: ['label'] } },
})
