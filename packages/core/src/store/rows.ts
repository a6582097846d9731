import type { MirroredKind } from '../catalog/lists.js'
import type { Json } from './validate.js'

/*
 * The rows the store keeps, as IndexedDB holds them. Their tables and indexes are
 * declared by each kind's manifest (`<kind>/kind.ts`); the version ladder that
 * opens them is catalog/schema.ts.
 */

/** A stored project. */
export interface ProjectRow {
  id: string
  name: string
  /** `messages`: sessions and messages sync too (conversations-sync.ts); absent = off. */
  sync: { enabled: boolean; messages?: boolean }
  createdAt: number
  updatedAt: number
  archivedAt?: number
  spaceId?: string
}

/** Where a memory came from. */
export interface Source {
  sessionId?: string
  messageId?: string
  /** The conversation messages a memory was formed from (an extractor's provenance). */
  messageIds?: string[]
  tool?: string
  note?: string
}

/** A fact as stored; `tagKeys` = `${projectId}\u0001${tag}` for per-project tag lookups. */
export interface FactRow {
  id: string
  projectId: string
  key: string
  value: Json
  confidence: number
  source?: Source
  tags: string[]
  tagKeys: string[]
  createdAt: number
  updatedAt: number
  deletedAt?: number
  version: number
  /** After this time (epoch ms) it leaves search and context, and the expiry sweep purges it. */
  expiresAt?: number
  /** Hybrid logical clock stamp of the last write (local or remote), for sync conflicts. */
  hlc: string
  /**
   * A purged fact of a synced project: a tombstone without content (value null, no tags,
   * no source, no history) kept so the purge reaches other devices and beats older states.
   */
  purged?: true
}
/** One version of a fact, for history and `at()`. */
export interface FactVersionRow {
  projectId: string
  key: string
  version: number
  value: Json
  validFrom: number
  validTo?: number
  deleted: boolean
  source?: Source
  confidence: number
  hlc: string
  origin: 'local' | 'remote'
}
/** A core block. */
export interface BlockRow {
  projectId: string
  label: string
  value: string
  limit: number
  description?: string
  readOnly: boolean
  updatedAt: number
  hlc: string
  deletedAt?: number
}
/** A conversation session. */
export interface SessionRow {
  id: string
  projectId: string
  title?: string
  channel?: string
  status: 'active' | 'closed'
  summary?: string
  startedAt: number
  lastActiveAt: number
  closedAt?: number
  lastSeq: number
  personId?: string
  /** Hybrid logical clock stamp of the last write that travels (create, close, reopen, purge); absent on a placeholder made for messages that arrived before their session. */
  hlc?: string
  /** A purged session of a project whose conversations sync: a tombstone kept so the purge reaches every device. */
  purged?: true
  /** Made for messages that arrived before their session's record; replaced by that record. */
  placeholder?: true
  /**
   * The highest stamp of a message row of this session stored without its own `hlc` (an
   * append, whose stamp is its order key's: clock-restore.ts); absent when there is none.
   */
  lastAt?: string
}
/** A message in a session. */
export interface MessageRow {
  id: string
  sessionId: string
  projectId: string
  seq: number
  role: 'user' | 'assistant' | 'system' | 'tool'
  content: string
  tokens: number
  createdAt: number
  meta?: Json
  personId?: string
  /**
   * The merged order key (message-order.ts): the stamp of its append, the same on every device.
   * Set on every stored row (legacy-fill.ts fills it for rows written without it).
   */
  at?: string
  /**
   * Hybrid logical clock stamp of the last write of this message; absent when it is the stamp of
   * its order key (an append, kept out of the `hlc` index: message-order.ts `messageStamp`).
   */
  hlc?: string
  /** A deleted message: a tombstone without content (message-edits.ts), left out of reads. */
  deletedAt?: number
}
/** A session, project or rolling summary. */
export interface SummaryRow {
  id: string
  projectId: string
  sessionId?: string
  kind: 'session' | 'project'
  text: string
  coversUntil?: number
  createdAt: number
  hlc: string
  deletedAt?: number
}
/** An archive passage. */
export interface PassageRow {
  id: string
  projectId: string
  text: string
  source?: Source
  tags: string[]
  createdAt: number
  /** After this time (epoch ms) it leaves search and context, and the expiry sweep deletes it. */
  expiresAt?: number
}
/** A pending replication of a mirrored record (facts, blocks, summaries) to the sync layer. */
export interface OutboxRow {
  seq?: number
  kind: MirroredKind
  projectId: string
  /** The document the entry goes to: '' for the project document, the session id for a message. */
  doc?: string
  id: string
  op: 'put' | 'delete'
  hlc: string
}
/** Key/value store for the store's own state (device id, clock). */
export interface MetaRow {
  key: string
  value: Json
}

/** The meta row that asks the search module to rebuild its index (set by an upgrade or a rekey). */
export const INDEX_REBUILD_KEY = 'textIndexRebuild'
/** The tables a full rebuild of the text index reads and writes (its sources, its own tables and meta). */
export const INDEX_REBUILD_TABLES = [
  'messages',
  'facts',
  'summaries',
  'passages',
  'entities',
  'relations',
  'observations',
  'textDocs',
  'textBlocks',
  'textSegs',
  'textDirs',
  'textSegDocs',
  'textCorpus',
  'meta',
] as const
