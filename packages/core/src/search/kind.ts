import { defineKind } from '../store/kind.js'

/**
 * The search index's tables (not a memory kind: it holds no record of its own). Version 2's compact
 * index replaced version 1's and is rebuilt from the records (the search module's `rebuildIndex`).
 */
export const searchKind = defineKind({
  name: 'search',
  tables: {
    searchDocs: { 1: '[docId+len+at+sid], projectId, *terms', 2: null },
    corpusStats: { 1: 'projectId', 2: null },
    vectors: { 1: 'docId, projectId' },
    embedQueue: { 1: '++seq, &docId, projectId' },
    // Batch rows (7, search/index/doc-batches.ts) found by member hashes (8) and by a shared id prefix (9).
    textDocs: { 2: '++n, d, q, x', 7: '++n, *d, q, x, [q+c]', 8: '++n, *d, *h, q, x, [q+c]', 9: '++n, *d, *h, q, x, [q+c], p' },
    textBlocks: { 2: '[q+w+b]' },
    textCorpus: { 2: 'p, &q' },
    // Posting segments of bulk writes (5) and their directories (6).
    textSegs: { 5: '[q+g+w]' },
    textDirs: { 6: '[q+g]' },
    textSegDocs: { 6: '[q+g]' },
  },
  changeKinds: [],
  namespaces: ['search'],
  encryption: {
    hashed: { textDocs: ['d'] },
    // A batch row's member count, term ends and dead members; a segment's document numbers, id ends and times (their ids are sealed).
    clear: { textDocs: ['t', 'f', 'l', 'a', 'k', 'm', 'te', 'ti', 'r'], textSegDocs: ['n', 'o', 'a'] },
    // Posting blocks, segments and directories of hashed terms, and per-project counts: no words.
    plain: ['textBlocks', 'textSegs', 'textDirs', 'textCorpus'],
  },
})
