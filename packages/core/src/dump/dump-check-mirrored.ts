import type { Dump } from './dump-validate.js'
import { MemoryError } from '../store/errors.js'
import { MIRRORED_KINDS } from '../catalog/lists.js'
import type { SyncedKinds } from '../replication/synced-kinds.js'

/** Stands in for a missing stamp while checking (import gives such rows a fresh stamp). */
const IMPORT_STAMP = '0000000000000.00000.import'

/**
 * Checks every mirrored row of a dump with its kind's descriptor: exactly the
 * checks a local write or a remote record gets (sizes, limits, times, stamps,
 * unknown fields), so a dump cannot bring in what the API would refuse.
 * @throws MemoryError `invalid_input` / `limit_exceeded` naming the row.
 */
export function checkMirroredRows(dump: Dump, descriptors: SyncedKinds): void {
  for (const kind of MIRRORED_KINDS) {
    const descriptor = descriptors[kind]
    const rows = (dump.tables[kind] ?? []) as Record<string, unknown>[]
    rows.forEach((raw, i) => {
      // Import fills these defaults; the rest must be as a write would leave it.
      const row: Record<string, unknown> = {
        ...(kind === 'facts' ? { tags: [], confidence: 1 } : kind === 'blocks' ? { readOnly: false, updatedAt: 0 } : {}),
        ...raw,
      }
      if (row.hlc === undefined) row.hlc = IMPORT_STAMP
      try {
        descriptor.check(descriptor.toRecord(row))
      } catch (error) {
        if (error instanceof MemoryError) throw new MemoryError(error.code, `dump.tables.${kind}[${i}]: ${error.message}`, { cause: error })
        throw error
      }
    })
  }
}
