import { decodeArtifactRows } from '../artifacts/dump-artifacts.js'
import { loadSyncedKinds } from '../replication/synced-kinds.js'
import { checkMirroredRows } from './dump-check-mirrored.js'
import { importDump } from './dump-import.js'
import { type Dump, validateDump } from './dump-validate.js'
import type { StoreContext } from '../store/store-context.js'
import { checkOneOf, checkOptions } from '../store/validate.js'

/** `memory.import`. */
export interface ImportApi {
  /**
   * Imports a dump in one transaction after validating all of it. `merge` upserts its
   * rows; `replace` first clears the dump's scope (its project, or the whole store).
   * @example
   * const dump = await memory.export('p1')
   * await other.import(JSON.parse(JSON.stringify(dump)), { mode: 'merge' })
   * @throws MemoryError `invalid_input` for a malformed dump, a bad or unknown option, or one
   * whose rows refer to projects or sessions that exist neither in the dump nor the store;
   * nothing is written then. `conflict` when a `merge` would rewrite a journal record or a
   * message the store holds at the same (session, seq). `quota_exceeded` when storage is
   * full (rolled back), `closed`.
   */
  import(dump: Dump, options: { mode: 'merge' | 'replace' }): Promise<{ written: number }>
}

/** Creates `memory.import` of a store: validates a whole dump, then writes it in one transaction. */
export function createImporter(ctx: StoreContext): ImportApi['import'] {
  return async (dump, options) => {
    ctx.assertOpen()
    const { mode } = checkOptions('options', options, ['mode'])
    checkOneOf('mode', mode, ['merge', 'replace'] as const)
    validateDump(ctx.db, dump)
    checkMirroredRows(dump, await loadSyncedKinds())
    // Blobs are made before the import's transaction: hashing bytes is not an IndexedDB request.
    return { written: await importDump(ctx, await decodeArtifactRows(dump), mode!) }
  }
}
