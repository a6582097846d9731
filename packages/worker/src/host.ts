import * as Comlink from 'comlink'
import {
  MemoryError,
  type ChangeFilter,
  type Change,
  type EncryptionStatus,
  type Memory,
  type MemoryOptions,
  type MemoryStatus,
  type SyncApi,
  type Unsubscribe,
} from '@engram/core'
import type { ClientPlugins, OpenedInfo, OpenRequest, StartSync, SyncStatus, WorkerContract } from './api.js'
import { CONNECT_MESSAGE, defaultLocks, holdLock, type LockManagerLike } from './web-locks.js'
import { createHostStores, type HostStore, type HostStores } from './host-stores.js'
import type { PluginName } from './plugin-pool.js'
import { installTransferHandlers } from './transfer-handlers.js'

/** Options of {@link exposeMemory}. */
export interface ExposeOptions {
  /**
   * Serve this endpoint only (a `MessagePort`, or Comlink's `nodeEndpoint(port)`
   * for an Electron `MessagePortMain`). Default: the worker's own scope — `self`
   * in a dedicated worker, every connecting port in a SharedWorker.
   */
  endpoint?: Comlink.Endpoint
  /** Settings the host decides for every store it opens (tests inject fake-indexeddb here). */
  memory?: Partial<Pick<MemoryOptions, 'indexedDB' | 'IDBKeyRange' | 'tokenizer' | 'now' | 'pricing' | 'maxArtifactBytes'>>
  /** Replaces `startSync` of `@engram/sync` (custom transports, tests). */
  startSync?: StartSync
  /** Web Locks for the sync election; `null` disables them (this host always leads). Default: `navigator.locks`. */
  locks?: LockManagerLike | null
}

/** A running host. */
export interface MemoryHost {
  /** Serves one more endpoint (a port handed over later, e.g. from Electron's main process). */
  connect(endpoint: Comlink.Endpoint, mode?: OpenedInfo['mode']): void
  /** Number of open connections. */
  readonly connections: number
  /** Closes every connection's store. */
  close(): void
}

let nextConnection = 0

/**
 * Serves Engram to the UI thread over Comlink. In a worker with no options it
 * serves the worker itself (dedicated) or every tab that connects (SharedWorker),
 * and any `MessagePort` posted to it with {@link CONNECT_MESSAGE}.
 *
 * @example
 * // worker.ts
 * import { exposeMemory } from '@engram/worker'
 * exposeMemory()
 */
export function exposeMemory(options: ExposeOptions = {}): MemoryHost {
  installTransferHandlers()
  const stores = createHostStores({
    memory: options.memory ?? {},
    startSync: options.startSync ? () => Promise.resolve(options.startSync!) : loadStartSync,
    locks: options.locks === null ? undefined : (options.locks ?? defaultLocks()),
  })
  const live = new Set<() => void>()
  const host: MemoryHost = {
    connect(endpoint, mode = 'port') {
      const dispose = serveConnection(endpoint, mode, stores, options.locks === null ? undefined : (options.locks ?? defaultLocks()), () =>
        live.delete(dispose),
      )
      live.add(dispose)
    },
    get connections() {
      return live.size
    },
    close() {
      for (const dispose of [...live]) dispose()
      stores.closeAll()
    },
  }
  if (options.endpoint) host.connect(options.endpoint, 'port')
  else connectGlobalScope(host)
  return host
}

async function loadStartSync(): Promise<StartSync> {
  const { startSync } = await import('@engram/sync')
  return (memory, options) => startSync(memory, options)
}

function connectGlobalScope(host: MemoryHost): void {
  const scope = globalThis as unknown as {
    onconnect?: unknown
    addEventListener?: (type: string, fn: (e: MessageEvent) => void) => void
    postMessage?: unknown
  }
  if (typeof scope.addEventListener !== 'function') throw new MemoryError('invalid_input', 'exposeMemory() outside a worker needs options.endpoint')
  if ('onconnect' in scope) {
    scope.addEventListener('connect', (event) => {
      const port = event.ports[0]
      if (port) host.connect(port, 'shared')
    })
    return
  }
  host.connect(scope as unknown as Comlink.Endpoint, 'dedicated')
  scope.addEventListener('message', (event) => {
    const port = event.ports[0]
    if (event.data === CONNECT_MESSAGE && port) host.connect(port, 'port')
  })
}

type Listener<A extends unknown[]> = ((...args: A) => unknown) & { [Comlink.releaseProxy]?: () => void }

function serveConnection(
  endpoint: Comlink.Endpoint,
  mode: OpenedInfo['mode'],
  stores: HostStores,
  locks: LockManagerLike | undefined,
  onDisposed: () => void,
): () => void {
  const id = `c${++nextConnection}`
  let store: HostStore | undefined
  let opening: Promise<OpenedInfo> | undefined
  let disposed = false
  const cleanups = new Set<() => void>()

  const needStore = (): HostStore => {
    if (store) return store
    throw new MemoryError(disposed ? 'closed' : 'invalid_input', disposed ? 'This connection is closed; connect again' : 'Call open() before using the memory')
  }
  const need = (): Memory => needStore().memory
  // A listener proxy is released with its subscription, or when the connection goes.
  const track = <A extends unknown[]>(listener: Listener<A>, off: () => unknown): Unsubscribe => {
    const release = (): void => {
      if (!cleanups.delete(release)) return
      void Promise.resolve(off()).catch(() => {})
      listener[Comlink.releaseProxy]?.()
    }
    cleanups.add(release)
    // Comlink hands the client a remote function; its calls return Promises there.
    return Comlink.proxy(release) as unknown as Unsubscribe
  }
  // A listener in the UI thread is called through its proxy; a failed call (tab gone) must not reach the caller.
  const forwarder =
    <A extends unknown[]>(listener: (...args: A) => unknown) =>
    (...args: A): void =>
      void Promise.resolve(listener(...args)).catch(() => {})

  const dispose = (): void => {
    if (disposed) return
    disposed = true
    for (const release of [...cleanups]) release()
    if (store) {
      store.pool.remove(id)
      stores.release(store)
      store = undefined
    }
    onDisposed()
  }

  const sync: SyncApi = {
    // The leader asks its sync engine; other tabs read the leader's statuses off the board.
    async status(projectId) {
      // The same check as in process: a bad id is the caller's mistake, not an unsynced project.
      if (typeof projectId !== 'string' || projectId === '') throw new MemoryError('invalid_input', 'projectId must be a non-empty string')
      return store?.sync?.status(projectId) ?? store?.board.status(projectId) ?? 'off'
    },
    async onStatus(listener) {
      const s = needStore()
      return track(listener as Listener<[string, SyncStatus]>, s.board.onStatus(forwarder(listener)))
    },
    async details(projectId) {
      if (typeof projectId !== 'string' || projectId === '') throw new MemoryError('invalid_input', 'projectId must be a non-empty string')
      // A tab that does not lead sync knows the leader's state, not its details.
      return store?.sync?.details?.(projectId) ?? { status: store?.board.status(projectId) ?? 'off', problems: [] }
    },
    flush: async () => {
      await store?.sync?.flush()
    },
    async whenSynced(projectId) {
      if (typeof projectId !== 'string' || projectId === '') throw new MemoryError('invalid_input', 'projectId must be a non-empty string')
      const s = needStore()
      if (s.sync?.whenSynced) return s.sync.whenSynced(projectId)
      if (!s.election) throw new MemoryError('invalid_input', 'Sync was not requested for this store (connectMemory without the sync option)')
      return s.board.whenSynced(projectId) // a follower tab: resolved by the leader's statuses
    },
    async openSession(projectId, sessionId) {
      if (typeof projectId !== 'string' || projectId === '') throw new MemoryError('invalid_input', 'projectId must be a non-empty string')
      if (typeof sessionId !== 'string' || sessionId === '') throw new MemoryError('invalid_input', 'sessionId must be a non-empty string')
      const s = needStore()
      if (s.sync?.openSession) return s.sync.openSession(projectId, sessionId)
      throw new MemoryError(
        'invalid_input',
        s.election
          ? 'Sessions load in the tab that leads sync (memory.sync.isLeader()); that tab loads the most recent ones by itself'
          : 'Sync was not requested for this store (connectMemory without the sync option)',
      )
    },
    isLeader: async () => store?.election?.isLeader ?? false,
    async onLeaderChange(listener) {
      const off = needStore().election?.onChange(forwarder(listener)) ?? (() => {})
      return track(listener as Listener<[boolean]>, off)
    },
  }

  const connection = {
    open(request: OpenRequest, plugins: ClientPlugins | undefined): Promise<OpenedInfo> {
      if (disposed) return Promise.reject(new MemoryError('closed', 'This connection is closed; connect again'))
      // The app's functions arrive as a proxy (a port pair): the pool releases it with the connection, this if it never gets there.
      const releasePlugins = (): void => {
        ;(plugins as unknown as Comlink.Remote<ClientPlugins> | undefined)?.[Comlink.releaseProxy]()
      }
      opening ??= (async () => {
        const opened = await stores.acquire(request).catch((error: unknown) => {
          releasePlugins()
          throw error
        })
        if (disposed) {
          stores.release(opened)
          releasePlugins()
          throw new MemoryError('closed', 'The connection closed while the store was opening')
        }
        store = opened
        const names = pluginNames(request)
        if (plugins && names.length > 0) opened.pool.add(id, plugins as unknown as Comlink.Remote<ClientPlugins>, names)
        else releasePlugins()
        if (request.sync) stores.ensureSync(opened, request.sync)
        if (locks && request.clientLock) watchClient(locks, request.clientLock, dispose)
        // Held until this connection is disposed, or until the worker dies: the client watches it.
        if (locks && typeof request.hostLock === 'string') cleanups.add(await holdLock(request.hostLock, locks))
        return { appId: opened.memory.appId, userId: opened.memory.userId, deviceId: opened.memory.deviceId, mode }
      })()
      return opening
    },
    close: dispose,
    sync,
    get projects() {
      return need().projects
    },
    get facts() {
      return need().facts
    },
    get blocks() {
      return need().blocks
    },
    get sessions() {
      return need().sessions
    },
    get messages() {
      return need().messages
    },
    get summaries() {
      return need().summaries
    },
    get archive() {
      return need().archive
    },
    get search() {
      return need().search
    },
    get context() {
      return need().context
    },
    get journal() {
      return need().journal
    },
    get runs() {
      return need().runs
    },
    get tasks() {
      return need().tasks
    },
    get usage() {
      return need().usage
    },
    get lessons() {
      return need().lessons
    },
    get turns() {
      return need().turns
    },
    get extraction() {
      return need().extraction
    },
    get observations() {
      return need().observations
    },
    get limitations() {
      return need().limitations
    },
    get patterns() {
      return need().patterns
    },
    get spaces() {
      return need().spaces
    },
    get artifacts() {
      return need().artifacts
    },
    get people() {
      return need().people
    },
    get entities() {
      return need().entities
    },
    get relations() {
      return need().relations
    },
    changes: {
      async subscribe(filter: ChangeFilter, listener: (batch: Change[]) => void): Promise<Unsubscribe> {
        const s = needStore()
        const forward = forwarder(listener)
        const offLocal = await s.memory.changes.subscribe(filter, forward)
        const offOthers = s.otherTabs?.subscribe(filter, forward)
        return track(listener as Listener<[Change[]]>, () => {
          offOthers?.()
          return offLocal()
        })
      },
    },
    encryption: {
      status: () => need().encryption.status(),
      enable: (key: CryptoKey) => need().encryption.enable(key),
      rekey: (key: CryptoKey) => need().encryption.rekey(key),
      async subscribe(listener: (status: EncryptionStatus) => void): Promise<Unsubscribe> {
        const off = await need().encryption.subscribe(forwarder(listener))
        return track(listener as Listener<[EncryptionStatus]>, off)
      },
    },
    status: {
      get: () => need().status.get(),
      async subscribe(listener: (status: MemoryStatus) => void): Promise<Unsubscribe> {
        const off = await need().status.subscribe(forwarder(listener))
        return track(listener as Listener<[MemoryStatus]>, off)
      },
    },
    stats: (projectId?: string) => need().stats(projectId),
    export: (projectId?: string) => need().export(projectId),
    import: (dump: Parameters<Memory['import']>[0], importOptions: Parameters<Memory['import']>[1]) => need().import(dump, importOptions),
    persist: () => need().persist(),
    adopt: (otherUserId: string) => need().adopt(otherUserId),
  } satisfies WorkerContract

  Comlink.expose(connection, endpoint)
  return dispose
}

function pluginNames(request: OpenRequest): PluginName[] {
  const names: PluginName[] = []
  if (request.embedderDimensions) names.push('embed')
  if (request.summarizer) names.push('summarize')
  if (request.extractor) names.push('extract')
  if (request.backgroundExtractor?.observe) names.push('observe')
  if (request.backgroundExtractor?.reflect) names.push('reflect')
  if (request.sync) names.push('token')
  return names
}

/** Disposes the connection when its tab dies: the client holds `lock` for its lifetime. */
function watchClient(locks: LockManagerLike, lock: string, dispose: () => void): void {
  locks.request(lock, {}, async () => dispose()).catch(() => {})
}
