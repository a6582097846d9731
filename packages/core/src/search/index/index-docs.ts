import { Dexie } from 'dexie'
import type { IndexedDoc, PutManyOptions, TextIndex } from '../../store/store-context.js'
import type { WriteScope } from '../../store/write.js'

/**
 * Indexes documents in the caller's write transaction: one batched `putMany`
 * when the index has it, else one `put` each (awaited through Dexie promises,
 * so a long run of puts that touch no table keeps Dexie's transaction zone).
 *
 * @throws MemoryError or a storage error of the caller's transaction (it rolls back).
 */
export async function indexDocs(index: TextIndex, w: WriteScope, docs: readonly IndexedDoc[], options: PutManyOptions = {}): Promise<void> {
  if (docs.length === 0) return
  if (index.putMany) return index.putMany(w, docs, options)
  for (const doc of docs) await Dexie.Promise.resolve(index.put(w, doc))
}
