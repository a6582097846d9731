import type { SyncRecordProblem } from '@engram/core'
import type * as Y from 'yjs'
import type { BackoffOptions } from './backoff.js'
import type { EncryptionOption } from './value-cipher.js'

/** Sync state of one project. */
export type SyncStatus = 'off' | 'connecting' | 'synced' | 'read_only' | 'offline' | 'error'

/** What a network connector reports; the mirror adds 'off' when not mirroring. */
export type ConnectionStatus = Exclude<SyncStatus, 'off'>

/**
 * Why a project is in status 'error', for the app to act on:
 * - `unauthorized`: the relay refused the room for the token's user (4403), or refused
 *   several fresh tokens in a row (4401/4402/4419).
 * - `token`: the app's `token()` failed or returned nothing.
 * - `refused`: the relay refused the room for good (malformed 4400, bad room 4404).
 * - `document_too_large`: the relay's document limit (4413) is reached.
 * - `frame_too_large`: one change is larger than the relay accepts in one frame, even alone
 *   (retrying continues).
 * - `relay_refused`: the relay accepted and then closed the connection on several attempts
 *   in a row before the project synced (retrying continues with backoff).
 * - `unreachable`: the socket did not open on several attempts in a row while the network is up:
 *   the relay is down or not at this URL (retrying continues with backoff; a device that is
 *   offline shows status 'offline' instead).
 * - `crypto`: values of the project cannot be read with this device's encryption.
 * - `key_mismatch`: the project is encrypted with another key, or not encrypted while this device encrypts.
 * - `internal`: an unexpected failure (see the message).
 * - `read_only` (with status `read_only`, not `error`): the token's scope is read-only, the relay
 *   drops this device's writes; its changes stay on it.
 */
export type SyncErrorReason =
  | 'unauthorized'
  | 'token'
  | 'refused'
  | 'document_too_large'
  | 'frame_too_large'
  | 'relay_refused'
  | 'unreachable'
  | 'crypto'
  | 'key_mismatch'
  | 'internal'
  | 'read_only'

/**
 * A record of a document of the project that the app should know of. Set aside, not applied:
 * its stamp is malformed (`malformed_stamp`: no device applies it, and a device that holds the
 * record publishes it again), or it was sealed by a device that set the project up with another
 * key at the same time and lost the key check (`other_key`). Applied, as on every device: its
 * stamp leads this device's clock by more than `maxClockLeadMs` (`clock_ahead`: the writing
 * device's clock is probably wrong; listed until the clock catches up or a later edit replaces it,
 * which the next edit on any device does).
 */
export type SyncProblem = SyncRecordProblem

/** A project's sync status with what the app needs to explain it. */
export interface SyncDetails {
  status: SyncStatus
  /** Set with status 'error' (why) and 'read_only' (`read_only`). */
  reason?: SyncErrorReason
  /** Set with status 'error' and 'read_only': what happened, for a developer or a user. */
  message?: string
  /** Records set aside (any status). */
  problems: readonly SyncProblem[]
}

/** What a {@link Connector} gets for one project document. */
export interface ConnectorContext {
  readonly doc: Y.Doc
  /** `<userId>/<projectId>`. */
  readonly room: string
  readonly projectId: string
  /** Reports the connection's state; with 'error', `reason` says why. */
  setStatus(status: ConnectionStatus, error?: unknown, reason?: SyncErrorReason): void
  /**
   * A link with `syncsClock` calls it on every connection before the other side gets this
   * document's state, with the relay's time (epoch ms, as of now; undefined when the relay does
   * not send it), and waits for it: the device's clock learns its offset and the edits that
   * waited go into the document, stamped right.
   */
  beforeSync?(relayTime: number | undefined): Promise<void>
  /** Later readings of the relay's time on the same connection (e.g. with each heartbeat). */
  relayTime?(relayTime: number): void
}

/** A live network link of one project document. */
export interface Connection {
  /**
   * True when the link calls `beforeSync` on every connection: local edits then wait in the
   * outbox while it is down and go out once it has read the relay's time.
   */
  readonly syncsClock?: boolean
  /**
   * Resolves once the other side holds everything this link sent so far (a
   * later confirmed sync of a new connection counts too; so do destroy and a
   * permanent refusal). Connectors without confirmations may leave it out.
   */
  confirm?(): Promise<void>
  /**
   * Asks the relay to delete this document's room, its storage and its quota (the owner purged
   * it); resolves once it did. Links that cannot leave it out: the document's content is then
   * only emptied.
   * @throws MemoryError `unauthorized` when the relay refuses (not the owner, read-only token), `internal`.
   */
  drop?(): Promise<void>
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
  /** Replaces the relay connector (tests, custom transports); `url`/`token`/`transport` are then unused. */
  connect?: Connector
  /**
   * How documents reach the relay. `'mux'` (default): every document of the device over one
   * socket to the relay's `/mux` endpoint (`muxConnector`). `'room'`: one y-websocket socket per
   * document (`websocketConnector`), for a relay without `/mux` (any plain y-websocket server
   * that sends Engram's scope and time messages, or ignores them).
   */
  transport?: 'mux' | 'room'

  /** Keep each project document in IndexedDB with y-indexeddb (the global `indexedDB`). Default: on when a global `indexedDB` exists. */
  persistence?: boolean
  /** Name of a project's stored document (its y-indexeddb database; `engram-sealed@<generation>:<name>` holds it sealed when the store is encrypted at rest). Default `engram-sync:<appId>:<userId>:<deviceId>:<projectId>`. */
  docName?: (projectId: string) => string
  /** Outbox entries drained per step. Default 500. */
  batchSize?: number
  /**
   * How far a remote record's stamp may lead this device's clock, in ms. A record beyond it
   * is set aside (a `clock_ahead` problem in `details()`), does not move this device's clock
   * and is replaced by the next local edit. Default 300,000 (5 minutes); up to one day is
   * honoured across restarts.
   */
  maxClockLeadMs?: number
  /**
   * Largest frame sent to the relay, in bytes. Larger changes are split. When the relay still
   * closes with 1009 (message too big) the limit is halved for this project. Default 1,000,000
   * (under the relay's default of 1 MiB).
   */
  maxFrameBytes?: number
  /**
   * End-to-end encryption of mirrored values (AES-GCM, a fresh IV per value): the relay stores
   * and merges documents whose values it cannot read. A passphrase is stretched with
   * PBKDF2-SHA256 (310,000 rounds, salt from the user id), so every device of the user that
   * knows it derives the same key. Give every device of the user the same option.
   */
  encryption?: EncryptionOption
  /**
   * Conversations (projects with `sync.messages`): each session is its own document. `eager`
   * sessions, the most recently active, load with their project (default 5, 0–1,000); any
   * other loads with `sync.openSession()` or when this device writes to it, and closes again
   * after `idleMs` without use.
   */
  sessions?: {
    eager?: number
    /**
     * A session document opened on use (`openSession`, a write) that is not among the eager ones
     * closes after this many ms without use, freeing its socket slot on the relay; it opens
     * again on the next use. Default 300,000 (5 minutes); 0 keeps them open until sync stops.
     */
    idleMs?: number
  }
  /** Called with failures that sync reports as status 'error' (or retries). Default: console.warn. */
  onError?: (error: unknown, projectId: string | undefined) => void
}

/** A running sync engine, see `startSync`. */
export interface Sync {
  /** Sync state of a project: 'off' when it is not mirrored. (sync) */
  status(projectId: string): SyncStatus
  /** The status with its error reason and the records set aside. (sync) */
  details(projectId: string): SyncDetails
  /** Calls `listener` on every change of a status, its reason or problems. @returns the unsubscribe function. */
  onStatus(listener: (projectId: string, status: SyncStatus, details: SyncDetails) => void): () => void
  /** Drains the outbox of every mirrored project (and session document) into its document now. */
  flush(): Promise<void>
  /**
   * Loads one session's document (a project whose conversations sync): its messages arrive
   * from the relay and stay mirrored and offline on this device from then on.
   * @throws MemoryError `invalid_input` when the project or its conversations do not sync here, `closed`.
   */
  openSession(projectId: string, sessionId: string): Promise<void>
  /** Resolves once the project is mirrored and its document synced with the relay. @throws MemoryError `closed` if sync closes first. */
  whenSynced(projectId: string): Promise<void>
  /** Stops mirroring and disconnects; nothing is deleted. Idempotent. */
  close(): Promise<void>
}
