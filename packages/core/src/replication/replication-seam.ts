import { MemoryError } from '../store/errors.js'
import type { ReplicationApi } from './replication.js'

const seams = new WeakMap<object, ReplicationApi>()

/** Registers the replication seam of a store made in this thread. */
export function registerReplication(memory: object, replication: ReplicationApi): void {
  seams.set(memory, replication)
}

/**
 * The replication seam of a store opened in this thread (`openMemory` or
 * `createMemory`): what `@engram/sync` replicates through. Not for apps.
 * @throws MemoryError `invalid_input` for anything else — a store reached
 * through a worker syncs inside the worker (`connectMemory(worker, { sync })`).
 */
export function replicationOf(memory: object): ReplicationApi {
  const seam = seams.get(memory)
  if (!seam)
    throw new MemoryError(
      'invalid_input',
      'Sync needs a store opened in this thread (openMemory or createMemory); for a store in a worker, pass the sync option to connectMemory',
    )
  return seam
}
