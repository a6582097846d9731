import { Dexie } from 'dexie'
import { maxKey } from '../../store/keys.js'
import type { IndexClearing } from '../../store/store-context.js'
import type { WriteScope } from '../../store/write.js'
import type { IndexChanges } from './index-state.js'
import type { IndexTables } from './text-index.js'

/* Clearing the index for an import that replaces memory (text-index.ts loads it on use, before the import's transaction). */

/** The clearing of an index whose transactions record their changes in `changesOf` (undefined: an index that keeps nothing). */
export function clearingOf(t: IndexTables, changesOf: ((w: WriteScope) => IndexChanges) | undefined): IndexClearing {
  return {
    removeProject: async (w, projectId) => {
      if (changesOf) await removeProjectDocs(t, changesOf(w), projectId)
    },
    reset: async (w) => {
      if (changesOf) await resetDocs(t, changesOf(w))
    },
  }
}

/** Deletes every document, posting and vector of a project, inside the caller's transaction; its number stays assigned. */
async function removeProjectDocs(t: IndexTables, changes: IndexChanges, projectId: string): Promise<void> {
  const row = await t.textCorpus.get(projectId)
  changes.vectorProjects.add(projectId)
  const work: Promise<unknown>[] = [t.vectors.where('projectId').equals(projectId).delete(), t.embedQueue.where('projectId').equals(projectId).delete()]
  if (row) {
    work.push(
      t.textDocs.where('q').equals(row.q).delete(),
      t.textBlocks.where('[q+w+b]').between([row.q, Dexie.minKey, Dexie.minKey], [row.q, maxKey(), maxKey()]).delete(),
      t.textSegs.where('[q+g+w]').between([row.q, Dexie.minKey, Dexie.minKey], [row.q, maxKey(), maxKey()]).delete(),
      t.textDirs.where('[q+g]').between([row.q, Dexie.minKey], [row.q, maxKey()]).delete(),
      t.textSegDocs.where('[q+g]').between([row.q, Dexie.minKey], [row.q, maxKey()]).delete(),
      t.textCorpus.put({ p: row.p, q: row.q, docs: 0, length: 0 }),
    )
    changes.removedProjects.push(row.q)
  }
  await Promise.all(work)
}

/** Deletes every document, posting and vector of every project, inside the caller's transaction. */
async function resetDocs(t: IndexTables, changes: IndexChanges): Promise<void> {
  // Project numbers stay assigned (another connection may still hold them in memory).
  await Promise.all([
    t.textDocs.clear(),
    t.textBlocks.clear(),
    t.textSegs.clear(),
    t.textDirs.clear(),
    t.textSegDocs.clear(),
    t.vectors.clear(),
    t.embedQueue.clear(),
    t.textCorpus.toCollection().modify((row) => {
      row.docs = 0
      row.length = 0
      delete row.s
    }),
  ])
  changes.reset = true
}
