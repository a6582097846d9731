import type * as Y from 'yjs'
import type { BackoffOptions } from './backoff.js'
import type { EncryptionOption } from './value-cipher.js'

/** Sync state of one project. */
export type SyncStatus = 'off' | 'connecting' | 'synced' | 'offline' | 'error'

/** What a network connector reports; the mirror adds 'off' when not mirroring. */
export type ConnectionStatus = Exclude<SyncStatus, 'off'>

/** What a {@link Connector} gets for one project document. */
export interface ConnectorContext {
  readonly doc: Y.Doc
  /** `<userId>/<projectId>`. */
  readonly room: string
  readonly projectId: string
  setStatus(status: ConnectionStatus, error?: unknown): void
}

/** A live network link of one project document. */
export interface Connection {
  destroy(): void
}

/** Connects a project document to other devices (default: y-websocket to the relay). */
export type Connector = (ctx: ConnectorContext) => Connection

/** Options of `startSync`. */
export interface SyncOptions {
  /** Relay URL, e.g. `wss://relay.example.com` (the room is appended as the path). */
  url?: string
  /** Returns a fresh signed token; called again on every (re)connect. */
  token?: () => Promise<string>
  /** WebSocket implementation; pass `ws` in Node. Default: the global WebSocket. */
  WebSocket?: unknown
  /** Reconnect backoff (jittered). */
  backoff?: BackoffOptions
  /**
   * Source of `online` / `offline` events: on `offline` every project reports 'offline' and
   * disconnects, on `online` it reconnects at once (fresh token, no backoff). Default: the
   * global scope (Window, WorkerGlobalScope) where it is an event target; `null` ignores them.
   */
  network?: EventTarget | null
  /** Liveness probe interval in ms; a socket silent for 2.5 intervals is closed and retried. 0 disables. Default 5,000. */
  heartbeatMs?: number
  /** Replaces the y-websocket connector (tests, custom transports); `url`/`token` are then unused. */
  connect?: Connector
  /** Keep each project document in IndexedDB with y-indexeddb (the global `indexedDB`). Default: on when a global `indexedDB` exists. */
  persistence?: boolean
  /** Name of a project's y-indexeddb database. Default `engram-sync:<appId>:<userId>:<deviceId>:<projectId>`. */
  docName?: (projectId: string) => string
  /** Outbox entries drained per step. Default 500. */
  batchSize?: number
  /**
   * End-to-end encryption of mirrored values (AES-GCM, a fresh IV per value): the relay stores
   * and merges documents whose values it cannot read. A passphrase is stretched with
   * PBKDF2-SHA256 (310,000 rounds, salt from the user id), so every device of the user that
   * knows it derives the same key. Give every device of the user the same option.
   */
  encryption?: EncryptionOption
  /** Called with failures that sync reports as status 'error' (or retries). Default: console.warn. */
  onError?: (error: unknown, projectId: string | undefined) => void
}

/** A running sync engine, see `startSync`. */
export interface Sync {
  /** Sync state of a project: 'off' when it is not mirrored. (sync) */
  status(projectId: string): SyncStatus
  /** Calls `listener` on every status change. @returns the unsubscribe function. */
  onStatus(listener: (projectId: string, status: SyncStatus) => void): () => void
  /** Drains the outbox of every mirrored project into its document now. */
  flush(): Promise<void>
  /** Resolves once the project is mirrored and its document synced with the relay. @throws MemoryError `closed` if sync closes first. */
  whenSynced(projectId: string): Promise<void>
  /** Stops mirroring and disconnects; nothing is deleted. Idempotent. */
  close(): Promise<void>
}
