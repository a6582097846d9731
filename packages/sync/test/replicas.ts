import { replicationOf } from '@engram/core/internal'
import 'fake-indexeddb/auto'
import type { Memory } from '@engram/core'
import { startSync, type LoopbackNetwork, type Sync, type SyncOptions } from '@engram/sync'
import { openTestMemory, testClock } from '../../../test/support/memory.js'

let run = 0

/** A replica's wall clock: `now` and the means to move it. */
export type TestClock = ReturnType<typeof testClock>

/** One device: a memory store (own fake IndexedDB, own clock) with project `p` synced, and its sync engine. */
export interface Replica {
  name: string
  memory: Memory & { indexedDB: IDBFactory }
  sync: Sync
  clock: TestClock
  errors: unknown[]
  /** Stops sync and starts it again on the same documents (a restart of sync). */
  restart(): Promise<void>
  /** Closes sync and the store, opens the store again on the same database and starts sync (a restart of the app). */
  reopen(): Promise<void>
}

/** Opens a replica on a loopback network (or with other sync options). */
export async function openReplica(
  name: string,
  network: LoopbackNetwork | undefined,
  options: Partial<SyncOptions> & {
    userId?: string
    start?: number
    clock?: TestClock
    projectSync?: boolean
    indexedDB?: IDBFactory
    docPrefix?: string
  } = {},
): Promise<Replica> {
  const clock = options.clock ?? testClock(options.start)
  const memory = await openTestMemory({ userId: options.userId ?? 'u1', now: clock.now, ...(options.indexedDB ? { indexedDB: options.indexedDB } : {}) })
  if (!(await memory.projects.get('p'))) await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: options.projectSync ?? true } })
  const errors: unknown[] = []
  const prefix = options.docPrefix ?? `t${++run}`
  // The replica's own settings stay out of startSync, which refuses options it does not know.
  const { userId: _userId, start: _start, clock: _clock, projectSync: _projectSync, indexedDB: _indexedDB, docPrefix: _docPrefix, ...syncOptions } = options
  const start = () =>
    startSync(replica.memory, {
      ...(network ? { connect: network.connector(name) } : {}),
      docName: (projectId) => `${prefix}:${name}:${projectId}`,
      onError: (error) => errors.push(error),
      ...syncOptions,
    })
  const replica: Replica = {
    name,
    memory,
    sync: undefined as unknown as Sync,
    clock,
    errors,
    async restart() {
      await replica.sync.close()
      replica.sync = start()
    },
    async reopen() {
      await replica.sync.close()
      replica.memory.close()
      replica.memory = await openTestMemory({ userId: memory.userId, now: clock.now, indexedDB: memory.indexedDB })
      replica.sync = start()
    },
  }
  replica.sync = start()
  return replica
}

/** Flushes every replica and delivers every message until the network is quiet. */
export async function settle(network: LoopbackNetwork, replicas: readonly Replica[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await Promise.all(replicas.map((r) => r.sync.flush()))
    const delivered = await network.settle()
    await Promise.all(replicas.map((r) => r.sync.flush()))
    if (delivered === 0) return
  }
  throw new Error('the replicas did not settle in 100 rounds')
}

/** The mirrored state of project `p` in a replica's Dexie, comparable across devices. */
export async function mirroredState(replica: Replica): Promise<Record<string, unknown>> {
  const { records } = await replicationOf(replica.memory).snapshot('p')
  return Object.fromEntries(records.map((r) => [`${r.kind}:${r.id}`, r.row]).sort(([a], [b]) => (String(a) < String(b) ? -1 : 1)))
}

/** Closes sync and memory of every replica. */
export async function closeAll(replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) {
    await r.sync.close()
    await r.memory.close()
  }
}
