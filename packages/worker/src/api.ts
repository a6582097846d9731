/**
 * The worker contract: everything that crosses the Comlink boundary between
 * the UI thread (`connectMemory`) and the SDK host (`exposeMemory`), in one
 * file. The host's exposed object `satisfies` {@link WorkerContract}; the client
 * imports only types from here.
 */
import type {
  BackgroundExtractor,
  ExtractionAnswer,
  ExtractionSettings,
  ObservationAnswer,
  ObservationInput,
  ReflectionInput,
  SyncProjectDetails,
  Embedder,
  Exchange,
  Extractor,
  Memory,
  MemoryOperation,
  MemoryView,
  Summarizer,
  SyncState,
} from '@engram/core'

/** Sync state of one project. */
export type SyncStatus = SyncState

/** The handle `startSync` of `@engram/sync` returns, as the host uses it. */
export interface SyncHandle {
  status(projectId: string): SyncStatus
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  flush(): void | Promise<void>
  /** Resolves once the project's doc has synced with the relay (when the sync supports it). */
  whenSynced?(projectId: string): Promise<void>
  /** The project's state with its error reason and set-aside records (when the sync supports it). */
  details?(projectId: string): SyncProjectDetails
  /** Loads one session's document of a project whose conversations sync (when the sync supports it). */
  openSession?(projectId: string, sessionId: string): Promise<void>
  close(): void | Promise<void>
}

/** End-to-end encryption of synced values (see `@engram/sync`); structured-clonable, so it crosses to the worker as is. */
export type SyncEncryption = { key: CryptoKey } | { passphrase: string }

/** Options the host passes to `startSync`. */
export interface StartSyncOptions {
  url: string
  token: () => Promise<string>
  WebSocket?: unknown
  encryption?: SyncEncryption
}

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
  /** Start sync in the worker (only the elected tab runs it; see `memory.sync.isLeader()`). */
  sync?: ConnectSyncOptions
  /**
   * At-rest encryption of the store (as `openMemory({ encryption })`): the AES-GCM key crosses to the
   * worker by structured clone (a non-extractable key stays non-extractable there).
   */
  encryption?: { key: CryptoKey }
  /** Runs in the UI thread; the worker calls it through a proxy. */
  embedder?: Embedder
  /** Runs in the UI thread; the worker calls it through a proxy. */
  summarizer?: Summarizer
  /**
   * Runs in the UI thread; the worker calls it through a proxy. A {@link BackgroundExtractor}
   * (`aiExtractor`) makes its model calls here, where the app's model is, and its queue and
   * writes run in the worker.
   */
  extractor?: Extractor | BackgroundExtractor
}

/** What the client sends to open a store (structured-clonable). */
export interface OpenRequest {
  appId: string
  userId: string
  /** Unique per connection; names the Web Lock the client holds while it lives. */
  clientId: string
  /** Name of the Web Lock the client holds while alive, when Web Locks exist; the host watches it. */
  clientLock?: string
  /** Name of a Web Lock the host holds while it serves this connection; the client watches it to notice a dead worker. */
  hostLock?: string
  sync?: { url: string; encryption?: SyncEncryption }
  /** At-rest encryption of the store (the key is structured-cloned). */
  encryption?: { key: CryptoKey }
  embedderDimensions?: number
  /** The embedder's model id (stored with the vectors: another model re-embeds). */
  embedderModel?: string
  summarizer?: boolean
  extractor?: boolean
  /** The UI thread's extractor runs in the background: its settings, and which of observe / reflect it has. */
  backgroundExtractor?: { settings?: ExtractionSettings; observe: boolean; reflect: boolean }
}

/** The app-supplied functions, living in the UI thread, as the worker calls them. */
export interface ClientPlugins {
  embed(texts: string[]): Promise<Float32Array[]>
  summarize(texts: string[], maxTokens: number): Promise<string>
  extract(exchange: Exchange, view: MemoryView): Promise<MemoryOperation[] | ExtractionAnswer>
  observe(input: ObservationInput, view: MemoryView): Promise<ObservationAnswer>
  reflect(input: ReflectionInput, view: MemoryView): Promise<ObservationAnswer>
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

/** The memory calls, as the host serves them. */
export type MemoryCalls = Omit<Memory, 'appId' | 'userId' | 'deviceId' | 'mode' | 'close' | 'closed'>

/** What the host exposes on every connection (one per port / tab). */
export interface WorkerContract extends MemoryCalls {
  /**
   * Opens (or joins, in a SharedWorker) the store; must precede every other call.
   * @throws MemoryError `invalid_input`, `conflict`, `quota_exceeded` as `openMemory`.
   */
  open(request: OpenRequest, plugins: ClientPlugins | undefined): Promise<OpenedInfo>
  /** Leaves the store; the last connection closes the database. */
  close(): void
}

/** A function type with its result made async. */
export type Async<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never

/** `T` with every method (in nested namespaces too) returning a Promise: what a call across a worker boundary can be. */
export type Promisified<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? Async<T[K]> : T[K] extends object ? Promisified<T[K]> : T[K]
}

/**
 * What `connectMemory` returns: exactly the in-process `Memory` (every method of
 * `Memory` already returns a Promise, so `Promisified<Memory>` is `Memory`; a
 * type-level test keeps it so).
 */
export type RemoteMemory = Memory
