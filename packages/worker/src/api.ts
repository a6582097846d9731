/**
 * The worker contract: everything that crosses the Comlink boundary between
 * the UI thread (`connectMemory`) and the SDK host (`exposeMemory`), in one
 * file. The host's exposed object `satisfies` {@link WorkerContract}; the client
 * imports only types from here.
 */
import type {
  Change, ChangeFilter, Embedder, Exchange, Extractor, Memory, MemoryOperation, MemoryView, Summarizer,
} from '@engram/core'

/** Sync state of one project (API.md §8). */
export type SyncStatus = 'off' | 'connecting' | 'synced' | 'offline' | 'error'

/** The handle `startSync` of `@engram/sync` returns, as the host uses it. */
export interface SyncHandle {
  status(projectId: string): SyncStatus
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  flush(): void | Promise<void>
  /** Resolves once the project's doc has synced with the relay (when the sync supports it). */
  whenSynced?(projectId: string): Promise<void>
  close(): void | Promise<void>
}

/** End-to-end encryption of synced values (see `@engram/sync`); structured-clonable, so it crosses to the worker as is. */
export type SyncEncryption = { key: CryptoKey } | { passphrase: string }

/** Options the host passes to `startSync`. */
export interface StartSyncOptions { url: string; token: () => Promise<string>; WebSocket?: unknown; encryption?: SyncEncryption }

/** `startSync` of `@engram/sync` (injectable in `exposeMemory` for tests and custom transports). */
export type StartSync = (memory: Memory, options: StartSyncOptions) => SyncHandle

/** The `sync` option of `connectMemory`: where the relay is and how to get a token. */
export interface ConnectSyncOptions {
  /** The relay's WebSocket URL, e.g. `wss://relay.example.com`. */
  url: string
  /** Returns a fresh signed token; called in the UI thread whenever the worker needs one. */
  token: () => Promise<string> | string
  /** End-to-end encrypt synced values: the same key or passphrase on every device of the user. */
  encryption?: SyncEncryption
}

/** Options of `connectMemory`. */
export interface ConnectOptions {
  appId: string
  userId: string
  /** Start sync in the worker (only the elected tab runs it; see `RemoteSync.isLeader`). */
  sync?: ConnectSyncOptions
  /** Runs in the UI thread; the worker calls it through a proxy. */
  embedder?: Embedder
  /** Runs in the UI thread; the worker calls it through a proxy. */
  summarizer?: Summarizer
  /** Runs in the UI thread; the worker calls it through a proxy. */
  extractor?: Extractor
}

/** What the client sends to open a store (structured-clonable). */
export interface OpenRequest {
  appId: string
  userId: string
  /** Unique per connection; names the Web Lock the client holds while it lives. */
  clientId: string
  /** Name of the Web Lock the client holds while alive, when Web Locks exist; the host watches it. */
  clientLock?: string
  sync?: { url: string; encryption?: SyncEncryption }
  embedderDimensions?: number
  summarizer?: boolean
  extractor?: boolean
}

/** The app-supplied functions, living in the UI thread, as the worker calls them. */
export interface ClientPlugins {
  embed(texts: string[]): Promise<Float32Array[]>
  summarize(texts: string[], maxTokens: number): Promise<string>
  extract(exchange: Exchange, view: MemoryView): Promise<MemoryOperation[]>
  token(): Promise<string>
}

/** What `open` answers. */
export interface OpenedInfo {
  appId: string
  userId: string
  deviceId: string
  /** `shared` when the host is a SharedWorker serving several tabs. */
  mode: 'dedicated' | 'shared' | 'port'
}

/** Sync as seen through the host. */
export interface HostSyncApi {
  /** The project's sync status; in a tab that does not lead sync, the leading tab's status. `off` when no tab syncs it. */
  status(projectId: string): SyncStatus
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  /** Drains the outbox now (no-op when this host is not the leader). */
  flush(): void | Promise<void>
  /**
   * Resolves once the project has synced with the relay (in a follower tab: once the leader reports it synced).
   * @throws MemoryError `invalid_input` when sync was not requested for this store, `closed` when it closes first.
   */
  whenSynced(projectId: string): Promise<void>
  /** True while this host holds the sync lock and runs sync. */
  isLeader(): boolean
  onLeaderChange(listener: (leader: boolean) => void): () => void
}

/** The memory calls, as the host serves them. */
export type MemoryCalls = Omit<Memory, 'appId' | 'userId' | 'deviceId' | 'close' | 'closed'>

/** What the host exposes on every connection (one per port / tab). */
export interface WorkerContract extends MemoryCalls {
  /**
   * Opens (or joins, in a SharedWorker) the store; must precede every other call.
   * @throws MemoryError `invalid_input`, `conflict`, `quota_exceeded` as `openMemory`.
   */
  open(request: OpenRequest, plugins: ClientPlugins | undefined): Promise<OpenedInfo>
  /** Leaves the store; the last connection closes the database. */
  close(): void
  readonly sync: HostSyncApi
}

/** A function type with its result made async. */
export type Async<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never

/** An object whose methods (and nested namespaces) all return Promises. */
export type RemoteNamespace<T> = {
  readonly [K in keyof T]: T[K] extends (...args: never[]) => unknown ? Async<T[K]> : T[K] extends object ? RemoteNamespace<T[K]> : T[K]
}

/** `changes` across the boundary: subscribing and unsubscribing are async. */
export interface RemoteChanges {
  /**
   * Calls `listener` with each committed batch that matches `filter`.
   * @returns the unsubscribe function; it releases the callback proxy.
   * @throws MemoryError `invalid_input` on a bad filter, `closed` after close().
   */
  subscribe(filter: ChangeFilter, listener: (batch: Change[]) => void): Promise<() => Promise<void>>
}

/** Sync status and leadership of a connected store, from the UI thread. */
export interface RemoteSync {
  status(projectId: string): Promise<SyncStatus>
  onStatus(listener: (projectId: string, status: SyncStatus) => void): Promise<() => Promise<void>>
  flush(): Promise<void>
  /**
   * Resolves at the project's next `synced`, in the leading tab and in every other tab.
   * @throws MemoryError `invalid_input` when `connectMemory` had no `sync` option, `closed` on close.
   */
  whenSynced(projectId: string): Promise<void>
  isLeader(): Promise<boolean>
  onLeaderChange(listener: (leader: boolean) => void): Promise<() => Promise<void>>
}

/** What `connectMemory` returns: the `Memory` shape with every call a Promise. */
export type RemoteMemory = RemoteNamespace<Omit<Memory, 'changes' | 'close' | 'closed'>> & {
  readonly changes: RemoteChanges
  readonly sync: RemoteSync
  /** `shared` when served by a SharedWorker. */
  readonly mode: OpenedInfo['mode']
  /** True once close() was called. */
  readonly closed: boolean
  /** Leaves the store, releases the database and ends a dedicated worker. Idempotent. */
  close(): Promise<void>
}
