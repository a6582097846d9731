import { MemoryError, type MemoryErrorCode } from '../store/errors.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import type { StatusHub, SyncState, Unsubscribe } from '../store/status.js'
import type { MirroredKind } from '../catalog/lists.js'

/**
 * `memory.sync`: the sync state of a store, the same in the page and through a
 * worker. Sync itself is started by `startSync(memory, …)` of `@engram/sync` in
 * the page, or by the `sync` option of `connectMemory` in a worker.
 */
export interface SyncApi {
  /** The project's sync state; `off` while sync is not running for it. @throws MemoryError `invalid_input`, `closed`. */
  status(projectId: string): Promise<SyncState>
  /**
   * The project's state with what explains it: the `reason` and `message` of an `error`, and the
   * records to know of: set aside (malformed stamps, another device's key), or applied at stamps
   * far ahead of this device's clock (`clock_ahead`; `memory.status` lists them of every project
   * in one `stamps_ahead` warning).
   * @throws MemoryError `invalid_input`, `closed`.
   */
  details(projectId: string): Promise<SyncProjectDetails>
  /** Calls `listener` on every state change of every project. @throws MemoryError `invalid_input`, `closed`. */
  onStatus(listener: (projectId: string, state: SyncState) => void): Promise<Unsubscribe>
  /** Sends pending local changes now (no-op while sync is not running). @throws MemoryError `closed`. */
  flush(): Promise<void>
  /**
   * Resolves once the project has synced with the relay.
   * @throws MemoryError `invalid_input` when sync is not running, `closed` when the store closes first.
   */
  whenSynced(projectId: string): Promise<void>
  /**
   * Loads one session's document of a project whose conversations sync (the most recent ones
   * load by themselves); its messages arrive and stay on this device from then on.
   * @throws MemoryError `invalid_input` when sync is not running, the project or its conversations
   * do not sync, or on bad ids; `closed`.
   */
  openSession(projectId: string, sessionId: string): Promise<void>
  /** True while this store runs sync (in several tabs, only one does). @throws MemoryError `closed`. */
  isLeader(): Promise<boolean>
  /** Calls `listener` when this store starts or stops running sync. @throws MemoryError `invalid_input`, `closed`. */
  onLeaderChange(listener: (leader: boolean) => void): Promise<Unsubscribe>
}

/** What a running sync gives the store it attaches to (`startSync` of `@engram/sync` returns one). */
export interface SyncEngine {
  status(projectId: string): SyncState
  /** `details` says why a state is `error` (`reason`, `message`). */
  onStatus(listener: (projectId: string, state: SyncState, details?: SyncStateDetails) => void): () => void
  flush(): void | Promise<void>
  whenSynced(projectId: string): Promise<void>
  /** Loads one session's document (engines that sync conversations). */
  openSession?(projectId: string, sessionId: string): Promise<void>
  details(projectId: string): SyncProjectDetails
  /** Stops it (the store calls it when it closes first). */
  close(): void | Promise<void>
}

/** A record sync set aside instead of applying it, with why. */
export interface SyncRecordProblem {
  type: 'malformed_stamp' | 'clock_ahead' | 'other_key'
  kind: MirroredKind
  /** The record's id in the project document. */
  id: string
  /** `<kind>:<id>`, unique per project. */
  key: string
  hlc: string
  message: string
  /** `clock_ahead`: the device the stamp names (the one that wrote this version of the record). */
  deviceId?: string
  /** `clock_ahead`: the fact's key or the block's label, for the kinds keyed by one. */
  name?: string
}

/** A project's sync state with what explains it. */
export interface SyncProjectDetails {
  status: SyncState
  /** With status `error`: why (`unauthorized`, `token`, `frame_too_large`, `document_too_large`, `key_mismatch`, `crypto`, `relay_refused`, …). */
  reason?: string
  /** With status `error`: what happened, for a developer or a user. */
  message?: string
  /** Records set aside (any status). */
  problems: readonly SyncRecordProblem[]
}

/** Why a project's sync is in `error`, as an engine reports it. */
export interface SyncStateDetails {
  /** e.g. `unauthorized`, `token`, `frame_too_large`, `document_too_large`, `key_mismatch`, `crypto`, `relay_refused`. */
  reason?: string
  message?: string
}

/** The `MemoryError` code a sync failure reason is shown with in `memory.status`. */
const REASON_CODES: Record<string, MemoryErrorCode> = {
  unauthorized: 'unauthorized',
  token: 'unauthorized',
  frame_too_large: 'quota_exceeded',
  document_too_large: 'quota_exceeded',
  crypto: 'crypto',
  key_mismatch: 'crypto',
}

/** The store's side of sync: the app's `memory.sync`, and the seam an engine attaches through. */
export interface SyncSlot {
  readonly api: SyncApi
  /** Attaches a running engine; returns its detach. @throws MemoryError `conflict` when one is attached already, `closed`. */
  attach(engine: SyncEngine): () => void
  /** The store is closing: stops an attached engine (its own close detaches it). */
  shutdown(): void
}

/** What `memory.sync`'s queries read of the slot: the attached engine. */
export interface SyncSlotState {
  readonly engine: SyncEngine | undefined
  assertOpen(): void
}

/**
 * Creates the sync slot of a store; engine states are mirrored into the status hub.
 * Attaching an engine and subscribing need no code beyond this file; `memory.sync`'s queries load on first call.
 */
export function createSyncSlot(hub: StatusHub, assertOpen: () => void): SyncSlot {
  let engine: SyncEngine | undefined
  let stopWatching: (() => void) | undefined
  const statusListeners = new Set<(projectId: string, state: SyncState) => void>()
  const leaderListeners = new Set<(leader: boolean) => void>()
  const state: SyncSlotState = {
    get engine() {
      return engine
    },
    assertOpen,
  }
  const emitLeader = (leader: boolean) => {
    for (const l of [...leaderListeners]) l(leader)
  }
  const load = loadOnUse('sync status', async () => (await import('./sync-api-methods.js')).createSyncApi(state))
  // Subscriptions register at once (a listener added before startSync sees its first states); the queries load on first call.
  const checkListener = (listener: unknown) => {
    assertOpen()
    if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'a listener function is required')
  }

  return {
    api: {
      ...methodsOnUse(load, ['status', 'details', 'flush', 'whenSynced', 'openSession', 'isLeader']),
      async onStatus(listener) {
        checkListener(listener)
        statusListeners.add(listener)
        return async () => void statusListeners.delete(listener)
      },
      async onLeaderChange(listener) {
        checkListener(listener)
        leaderListeners.add(listener)
        return async () => void leaderListeners.delete(listener)
      },
    },
    shutdown() {
      if (engine) void Promise.resolve(engine.close()).catch(() => {})
    },
    attach(next) {
      assertOpen()
      if (engine) throw new MemoryError('conflict', 'Sync is already running for this store; close it before starting it again')
      engine = next
      hub.enable('sync', true)
      /** The records each project holds at stamps far ahead of this device's clock: one `stamps_ahead` warning. */
      const ahead = new Map<string, readonly SyncRecordProblem[]>()
      const showAhead = (projectId: string, syncState: SyncState): void => {
        const listed = syncState === 'off' ? [] : next.details(projectId).problems.filter((p) => p.type === 'clock_ahead')
        if (listed.length === 0 && !ahead.has(projectId)) return
        if (listed.length === 0) ahead.delete(projectId)
        else ahead.set(projectId, listed)
        if (ahead.size === 0) return hub.warn('stamps_ahead', undefined)
        // The warning's text loads with the first such record (most stores never see one); it reads the list as it is then.
        void import('./stamps-ahead.js').then(({ stampsAheadWarningOf }) => {
          if (engine === next) hub.warn('stamps_ahead', stampsAheadWarningOf(ahead))
        })
      }
      stopWatching = next.onStatus((projectId, syncState, details) => {
        hub.setSync(projectId, syncState)
        showAhead(projectId, syncState)
        if (syncState === 'error') {
          const code = REASON_CODES[details?.reason ?? ''] ?? 'internal'
          hub.fail('sync', new MemoryError(code, details?.message ?? `Sync of project ${projectId} failed (${details?.reason ?? 'unknown reason'})`), projectId)
        } else if (syncState === 'synced') hub.recover('sync')
        for (const l of [...statusListeners]) l(projectId, syncState)
      })
      emitLeader(true)
      return () => {
        if (engine !== next) return
        stopWatching?.()
        engine = undefined
        hub.warn('stamps_ahead', undefined)
        for (const projectId of Object.keys(hub.snapshot().sync.projects)) hub.setSync(projectId, 'off')
        hub.enable('sync', false)
        emitLeader(false)
      }
    },
  }
}
