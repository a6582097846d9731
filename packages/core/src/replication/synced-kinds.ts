import { MIRRORING_KINDS, type MirroredKind } from '../catalog/lists.js'
import type { SyncedKind } from '../store/synced-kind.js'

/** The descriptor of every mirrored kind: what replication, import, adoption and the outbox read. */
// biome-ignore lint/suspicious/noExplicitAny: each descriptor has its own row type
export type SyncedKinds = Readonly<Record<MirroredKind, SyncedKind<any>>>

let loading: Promise<SyncedKinds> | undefined

/**
 * Loads every mirrored kind's descriptor, as its manifest names it (once; a failed load is tried
 * again on the next call). Replication, import and adoption load them on use: a store that never
 * syncs or imports never loads their checks.
 */
export function loadSyncedKinds(): Promise<SyncedKinds> {
  loading ??= Promise.all(MIRRORING_KINDS.map(async (k) => [k.name, await k.mirrored.descriptor()] as const)).then(
    (entries) => Object.fromEntries(entries) as unknown as SyncedKinds,
    (error: unknown) => {
      loading = undefined
      throw error
    },
  )
  return loading
}
