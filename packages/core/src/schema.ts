import { Dexie, type Table } from 'dexie'
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
  sync: { enabled: boolean }
  createdAt: number
  updatedAt: number
  archivedAt?: number
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
  kind: 'facts' | 'blocks' | 'summaries'
  projectId: string
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

  constructor(name: string, deps: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange }) {
    super(name, {
      ...(deps.indexedDB ? { indexedDB: deps.indexedDB } : {}),
      ...(deps.IDBKeyRange ? { IDBKeyRange: deps.IDBKeyRange } : {}),
      chromeTransactionDurability: 'relaxed',
    })
    this.version(1).stores(SCHEMA_V1)
  }
}

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

/** Every table name, for transactions that span the whole store (import, purge). */
export const ALL_TABLES = Object.keys(SCHEMA_V1)
