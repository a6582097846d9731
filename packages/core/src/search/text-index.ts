import type { TextIndex } from '../store-context.js'

/** The incremental BM25 index in IndexedDB (scaffolding until the search module lands). */
export function createTextIndex(): TextIndex {
  return {
    tables: [],
    async put() {},
    async remove() {},
    async removeProject() {},
  }
}
