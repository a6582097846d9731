import { defineKind } from '../store/kind.js'

/** Core blocks: label → text with a character limit, per project. */
export const blocksKind = defineKind({
  name: 'blocks',
  uses: ['projects'],
  tables: { blocks: { 1: '[projectId+label], projectId' } },
  mirrored: { when: 'always', document: 'project', identity: 'label', descriptor: async () => (await import('./blocks-sync.js')).syncedBlocks },
  dump: { projectRows: true },
  encryption: { hashed: { blocks: ['label'] } },
})
