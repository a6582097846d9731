import { Dexie, type Table, type Transaction } from 'dexie'
import { legacyFillMiddleware, legacySessionStamp } from '../messages/legacy-fill.js'
import { legacyOrder } from '../messages/message-order.js'
import { freshHandle } from '../runtime/task-handle.js'
import type { Json } from './validate.js'

/*
 * Every Dexie version lives in this module. Version 1 is the first released
 * schema; each later version must come with an upgrade function and a test that
 * opens a database written by the version before it (schema.test.ts).
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
}
/** A pending replication of a mirrored record (facts, blocks, summaries) to the sync layer. */
export interface OutboxRow {
  seq?: number
  kind: 'facts' | 'blocks' | 'summaries' | 'patterns' | 'artifacts' | 'sessions' | 'messages'
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

/** The Dexie database behind one memory store. Tables are typed per row. */
export class EngramDb extends Dexie {
  meta!: Table<MetaRow, string>
  projects!: Table<ProjectRow, string>
  facts!: Table<FactRow, [string, string]>
  factVersions!: Table<FactVersionRow, [string, string, number]>
  blocks!: Table<BlockRow, [string, string]>
  sessions!: Table<SessionRow, string>
  messages!: Table<MessageRow, string>
  summaries!: Table<SummaryRow, string>
  passages!: Table<PassageRow, string>
  outbox!: Table<OutboxRow, number>
  // Tables of the search index and the agent runtime are typed where they are used
  // (search/*, journal.ts, runs.ts, tasks.ts, usage.ts, lessons.ts, turns.ts).

  /**
   * `rebuildIndex` rebuilds the search index when an upgrade replaces its layout (the search
   * module gives it); without it the upgrade leaves a note and the search module rebuilds the
   * index the first time a store with it opens.
   */
  constructor(name: string, deps: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange; rebuildIndex?: (tx: Transaction) => Promise<void> }) {
    super(name, {
      ...(deps.indexedDB ? { indexedDB: deps.indexedDB } : {}),
      ...(deps.IDBKeyRange ? { IDBKeyRange: deps.IDBKeyRange } : {}),
      chromeTransactionDurability: 'relaxed',
    })
    this.version(1).stores(SCHEMA_V1)
    // Version 2: the compact search index (search/index-rows.ts) replaces version 1's; it is rebuilt from the records.
    this.version(2)
      .stores(SCHEMA_V2_CHANGES)
      .upgrade((tx) => (deps.rebuildIndex ? deps.rebuildIndex(tx) : tx.table('meta').put({ key: INDEX_REBUILD_KEY, value: true })))
    // Task handles and the tables of the people, limitations, patterns, spaces and artifacts modules.
    this.version(MODULES_VERSION)
      .stores(SCHEMA_MODULES)
      .upgrade(async (tx) => {
        const taken = new Set<string>()
        await tx
          .table('tasks')
          .toCollection()
          .modify((task: { handle?: string }) => {
            task.handle = freshHandle(taken)
            taken.add(task.handle)
          })
      })
    // Conversations that sync: messages get their merged order key and stamp, sessions a stamp, outbox entries their document.
    this.version(CONVERSATIONS_VERSION)
      .stores(SCHEMA_CONVERSATIONS)
      .upgrade(async (tx) => {
        await tx
          .table('messages')
          .toCollection()
          .modify((m: MessageRow) => {
            if (m.at === undefined) Object.assign(m, legacyOrder(m))
          })
        await tx
          .table('sessions')
          .toCollection()
          .modify((s: SessionRow) => {
            s.hlc ??= legacySessionStamp(s)
          })
        await tx
          .table('outbox')
          .toCollection()
          .modify((o: OutboxRow) => {
            o.doc ??= ''
          })
      })
    // Posting segments of bulk writes (search/segments.ts); the posting blocks stay as they are.
    this.version(SEGMENTS_VERSION).stores(SCHEMA_SEGMENTS)
    // Directories of posting segments (search/segment-dirs.ts); segments written before have none and are read as before.
    this.version(DIRECTORIES_VERSION).stores(SCHEMA_DIRECTORIES)
    // Batch rows of bulk-written documents (search/doc-batches.ts): ids are found in a member list, projects count by `[q+c]`.
    this.version(BATCHES_VERSION).stores(SCHEMA_BATCHES)
    // Batch rows found by the hashes of their member ids (search/doc-batches.ts `docsById`).
    this.version(ID_HASHES_VERSION).stores(SCHEMA_ID_HASHES)
    // Batch rows of ids with a long shared prefix found by it (search/doc-batches.ts `idPrefixes`).
    this.version(ID_PREFIXES_VERSION).stores(SCHEMA_ID_PREFIXES)
    // Message rows written without an order key, and session rows without a stamp (older dumps and callers), get the legacy ones.
    this.use(legacyFillMiddleware)
    // Nothing reads the store through Dexie's live queries: their change tracking (and its broadcast on every commit) is dropped.
    this.unuse({ stack: 'dbcore', name: 'Observability' })
    this.unuse({ stack: 'dbcore', name: 'Cache' })
  }
}

export { isPlaceholder, legacySessionStamp } from '../messages/legacy-fill.js'

/** The meta row an upgrade without the search module leaves: the index must be rebuilt from the records. */
export const INDEX_REBUILD_KEY = 'textIndexRebuild'

/** Version 1 of the schema: table → Dexie index spec. */
export const SCHEMA_V1: Record<string, string> = {
  meta: 'key',
  projects: 'id, updatedAt',
  facts: '[projectId+key], id, [projectId+deletedAt], *tagKeys',
  factVersions: '[projectId+key+version], [projectId+key+validFrom]',
  blocks: '[projectId+label], projectId',
  sessions: 'id, [projectId+lastActiveAt], [status+lastActiveAt]',
  messages: 'id, [sessionId+seq], [projectId+createdAt]',
  summaries: 'id, [projectId+createdAt], [projectId+kind+createdAt], [sessionId+createdAt]',
  passages: 'id, [projectId+createdAt]',
  outbox: '++seq, projectId',
  // search index (search/text-index.ts, search/embed-queue.ts)
  searchDocs: '[docId+len+at+sid], projectId, *terms',
  corpusStats: 'projectId',
  vectors: 'docId, projectId',
  embedQueue: '++seq, &docId, projectId',
  // agent runtime (runtime/*.ts)
  journal: '[sessionId+seq], [sessionId+idempotencyKey], [sessionId+kind+seq], [sessionId+resumeToken+seq]',
  journalSessions: 'sessionId, last, first',
  runs: 'runId',
  checkpoints: '[runId+phase], [runId+order]',
  toolEvents: '[runId+seq]',
  tasks: 'id, projectId, [status+dueAt], [projectId+status]',
  usage: '++seq, sessionId, projectId',
  lessons: '[projectId+domain+key], projectId',
  outcomes: '++seq, [projectId+domain]',
  turns: '[sessionId+turnId], [sessionId+status], updatedAt',
}

/** What version 2 changes: the search index's tables (search/index-rows.ts). */
export const SCHEMA_V2_CHANGES: Record<string, string | null> = {
  searchDocs: null,
  corpusStats: null,
  textDocs: '++n, d, q, x',
  textBlocks: '[q+w+b]',
  textCorpus: 'p, &q',
}

/** Version 2 of the schema, whole: table → Dexie index spec. */
export const SCHEMA_V2: Record<string, string> = Object.fromEntries(
  Object.entries({ ...SCHEMA_V1, ...SCHEMA_V2_CHANGES }).filter((entry): entry is [string, string] => entry[1] !== null),
)

/** The version that adds {@link SCHEMA_MODULES}. */
export const MODULES_VERSION = 3

/**
 * What version {@link MODULES_VERSION} changes: tasks get a unique `handle`
 * (existing tasks get one in the upgrade); new tables of the modules.
 */
export const SCHEMA_MODULES: Record<string, string> = {
  tasks: 'id, projectId, [status+dueAt], [projectId+status], &handle',
  // limitations.ts: keyed by the folded title
  limitations: 'key, status',
  // patterns.ts: id = patternId(projectId, normalised text); synced like facts
  patterns: 'id, projectId, [projectId+confidence]',
  // spaces.ts (projects name theirs in ProjectRow.spaceId)
  spaces: 'id',
  // artifacts.ts: metadata and the Blob (when on this device)
  artifacts: 'id, [projectId+createdAt], runId',
  // people.ts: an id, the canonical id it is an alias of
  people: 'id, canonicalId',
}

/** The version that adds {@link SCHEMA_CONVERSATIONS}. */
export const CONVERSATIONS_VERSION = 4

/**
 * What version {@link CONVERSATIONS_VERSION} changes: messages are read in merged order
 * (`[sessionId+at]`) and found by stamp (clock restore); outbox entries name their document.
 */
export const SCHEMA_CONVERSATIONS: Record<string, string> = {
  messages: 'id, [sessionId+seq], [projectId+createdAt], [sessionId+at], hlc',
  outbox: '++seq, projectId, [projectId+doc]',
}

/** The version that adds {@link SCHEMA_SEGMENTS}. */
export const SEGMENTS_VERSION = 5

/**
 * What version {@link SEGMENTS_VERSION} changes: the search index gets posting segments
 * (search/index-rows.ts `textSegs`) for bulk writes; nothing stored changes, so no upgrade runs.
 */
export const SCHEMA_SEGMENTS: Record<string, string> = {
  textSegs: '[q+g+w]',
}

/** The version that adds {@link SCHEMA_DIRECTORIES}. */
export const DIRECTORIES_VERSION = 6

/**
 * What version {@link DIRECTORIES_VERSION} changes: each posting segment gets a directory of its
 * terms and a list of its documents (search/index-rows.ts `textDirs`, `textSegDocs`), so queries
 * read only the rows that hold their terms and no row per result; nothing stored changes, so no
 * upgrade runs.
 */
export const SCHEMA_DIRECTORIES: Record<string, string> = {
  textDirs: '[q+g]',
  textSegDocs: '[q+g]',
}

/** The version that adds {@link SCHEMA_BATCHES}. */
export const BATCHES_VERSION = 7

/**
 * What version {@link BATCHES_VERSION} changes: a `textDocs` row may hold a batch of documents
 * (search/index-rows.ts `TextBatchRow`), so the id index takes many entries per row and batches
 * are counted per project by `[q+c]`; messages drop their `[projectId+createdAt]` index (a
 * project's messages are read through its sessions). Stored rows stay as they are, so no upgrade
 * runs (IndexedDB rebuilds the id index and drops the other).
 */
export const SCHEMA_BATCHES: Record<string, string> = {
  textDocs: '++n, *d, q, x, [q+c]',
  // A project's messages are found through its sessions (message-order.ts `messagesOf`): one index less for every message written.
  messages: 'id, [sessionId+seq], [sessionId+at], hlc',
}

/** The version that adds {@link SCHEMA_ID_HASHES}. */
export const ID_HASHES_VERSION = 8

/**
 * What version {@link ID_HASHES_VERSION} changes: a batch row written from now on is found by the
 * hashes of its member ids (`*h`), not by the ids themselves: as an index key a number costs
 * IndexedDB a fraction of a 40-character id, and a bulk write adds one per document. Batches
 * written before keep their ids in the id index; nothing stored changes, so no upgrade runs.
 */
export const SCHEMA_ID_HASHES: Record<string, string> = {
  textDocs: '++n, *d, *h, q, x, [q+c]',
}

/** The version that adds {@link SCHEMA_ID_PREFIXES}. */
export const ID_PREFIXES_VERSION = 9

/**
 * What version {@link ID_PREFIXES_VERSION} changes: a batch row whose member ids share a long
 * enough prefix (ids that grow with time, as Engram's do: the documents of an import or a large
 * `appendMany`) is found by that prefix, one index key per row (`p`), instead of a hash per member.
 * Other batches keep their hashes; nothing stored changes, so no upgrade runs.
 */
export const SCHEMA_ID_PREFIXES: Record<string, string> = {
  textDocs: '++n, *d, *h, q, x, [q+c], p',
}

/** The current schema version. */
export const SCHEMA_VERSION = ID_PREFIXES_VERSION
/** The tables of the current schema version: table → Dexie index spec. */
export const SCHEMA: Record<string, string> = {
  ...SCHEMA_V2,
  ...SCHEMA_MODULES,
  ...SCHEMA_CONVERSATIONS,
  ...SCHEMA_SEGMENTS,
  ...SCHEMA_DIRECTORIES,
  ...SCHEMA_BATCHES,
  ...SCHEMA_ID_HASHES,
  ...SCHEMA_ID_PREFIXES,
}

/** Every table name, for transactions that span the whole store (import, purge). */
export const ALL_TABLES = Object.keys(SCHEMA)
