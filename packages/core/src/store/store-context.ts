import type { MirroredSets } from './kind.js'
import type { ChangeFeed } from './change-feed.js'
import type { ClockOffset } from './clock-offset.js'
import type { CryptoSlot } from '../encryption/slot.js'
import type { HybridClock } from './hlc.js'
import type { EngramDb } from '../catalog/schema.js'
import type { StatusHub } from './status.js'
import type { SyncSlot } from '../replication/sync-api.js'
import type { Tokenizer } from './token-estimate.js'
import type { WriteScope } from './write.js'

/** An app-supplied embedding model. Enables vector and hybrid search. */
export interface Embedder {
  /** Length of every vector `embed` returns. */
  dimensions: number
  /**
   * The model's id (optional). Stored with the vectors: opening a store with an
   * embedder of another model (or dimension) re-embeds every message and passage
   * in the background instead of mixing vectors of two models.
   */
  model?: string
  /** Embeds a batch of texts; one vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>
}

/** A document as the full-text index sees it. */
export interface IndexedDoc {
  /** `<kind>:<record id>`, e.g. `message:0190…`. */
  docId: string
  kind: 'message' | 'fact' | 'summary' | 'passage' | 'entity' | 'relation' | 'observation'
  projectId: string
  sessionId?: string
  text: string
  createdAt: number
}

/** Options of {@link TextIndex.putMany}. */
export interface PutManyOptions {
  /** The documents are new (fresh ids): skip looking for an older copy to replace. */
  fresh?: boolean
}

/**
 * The seam between the memory kinds and the search index: kinds call it inside
 * their own write transaction so postings commit or roll back with the write.
 */
export interface TextIndex {
  /** Tables the index writes; include them in every transaction that calls it. */
  readonly tables: readonly string[]
  /** Indexes one document (`fresh`: a new id, so no older copy is looked up). */
  put(w: WriteScope, doc: IndexedDoc, options?: PutManyOptions): Promise<void>
  /** Indexes several documents with a few batched requests (optional; callers fall back to `put`). */
  putMany?(w: WriteScope, docs: readonly IndexedDoc[], options?: PutManyOptions): Promise<void>
  remove(w: WriteScope, docId: string): Promise<void>
  /**
   * Loads what an import that replaces memory clears the index with (its code loads on use):
   * call it before the transaction opens, then use what it gives inside the transaction.
   */
  clearing?(): Promise<IndexClearing>
  /**
   * Loads the code a bulk write is packed and merged with (it loads in the background as the store
   * opens): an import calls it before its transaction opens, so that even right after open its
   * documents go into batch rows and posting segments rather than the unmerged tail. Never rejects.
   */
  prepareBulk?(): Promise<void>
}

/** Clearing the index inside a transaction (see {@link TextIndex.clearing}). */
export interface IndexClearing {
  /** Removes every document of a project (an import that replaces the project). */
  removeProject(w: WriteScope, projectId: string): Promise<void>
  /** Removes every document of every project (a whole-store import replace); caches follow after commit. */
  reset(w: WriteScope): Promise<void>
}

/** Everything a memory-kind module needs from the store it belongs to. */
export interface StoreContext {
  readonly db: EngramDb
  readonly appId: string
  readonly userId: string
  readonly now: () => number
  readonly tokenizer: Tokenizer
  /** Stamps local writes; its time source is `now()` plus {@link StoreContext.clockOffset}. */
  readonly clock: HybridClock
  /** This device's clock offset from the relay (kept in `meta`); sync updates it through the replication seam. */
  readonly clockOffset: ClockOffset
  readonly feed: ChangeFeed
  /** Which kinds' writes fill the sync outbox (from the kinds' manifests). */
  readonly mirrored: MirroredSets
  /** Projects whose mirrored kinds go to the sync outbox. Kept current by projects.ts. */
  readonly syncedProjects: Set<string>
  /** Synced projects whose sessions and messages sync too (`sync.messages`). Kept current by projects.ts. */
  readonly conversationProjects: Set<string>
  /** The full-text index every indexed kind writes through; the search module installs it (default: keeps nothing). */
  index: TextIndex
  /**
   * Loads the rebuild of the whole full-text index; call it before the transaction opens, then run the
   * function it gives inside `w` (the search module sets it; at-rest encryption uses it when it switches
   * keys). Vectors and queued embeddings are kept.
   */
  rebuildIndex?: () => Promise<(w: WriteScope) => Promise<void>>
  /** At-rest encryption's seam (installed once the store's keys are unlocked); absent in bare test contexts. */
  readonly crypto?: CryptoSlot
  /** Background state and failures (`memory.status`). */
  readonly status: StatusHub
  /** `memory.sync` and the seam a sync engine attaches through. */
  readonly sync: SyncSlot
  /** @throws MemoryError `closed` after close(). */
  assertOpen(): void
  /** The IndexedDB factory and key range the store was opened with (to open another user's database: `adopt`). */
  readonly dbDeps?: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange }
  /** Most bytes of artifacts kept on this device (the artifacts module sets it; default 256 MiB). */
  artifactBudget?: number
  /** Tasks to run on close (timers, queues). */
  readonly onClose: Array<() => void>
}

/** The id of the built-in project that holds the user's own cross-project memory. */
export const USER_PROJECT = 'user'
