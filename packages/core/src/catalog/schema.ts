import { Dexie, type Table, type Transaction } from 'dexie'
import type { KindManifest } from '../store/kind.js'
import type { BlockRow, FactRow, FactVersionRow, MessageRow, MetaRow, OutboxRow, PassageRow, ProjectRow, SessionRow, SummaryRow } from '../store/rows.js'
import { INDEX_REBUILD_KEY } from '../store/rows.js'
import { MemoryError } from '../store/errors.js'
import { wellFormedTextMiddleware } from '../store/well-formed-text.js'
import { KINDS } from './kinds.js'

/*
 * The version ladder: IndexedDB has one version per database, so every Dexie version lives
 * in this module, built from the tables each kind declares in its manifest (`<kind>/kind.ts`)
 * and the store's own (`meta`, `outbox`). Version 1 is the first released schema; each later
 * version must come with an upgrade where rows change and a test that opens a database written
 * by the version before it (store/schema.test.ts).
 */

/** The store's own tables: its state (device id, marks, keys) and the sync outbox. */
const STORE_TABLES: KindManifest['tables'] = {
  meta: { 1: 'key' },
  outbox: { 1: '++seq, projectId', 4: '++seq, projectId, [projectId+doc]' },
}

/** Every manifest's tables, the store's first. */
const DECLARED: readonly KindManifest['tables'][] = [STORE_TABLES, ...KINDS.map((k) => k.tables)]

/** The tables a version changed: table → index spec, `null` where it dropped the table. */
export function schemaChangesAt(version: number): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  for (const tables of DECLARED) for (const [name, specs] of Object.entries(tables)) if (specs[version] !== undefined) out[name] = specs[version]
  return out
}

/** The whole schema at a version: table → index spec. */
export function schemaAt(version: number): Record<string, string> {
  const out: Record<string, string | null> = {}
  for (let v = 1; v <= version; v++) Object.assign(out, schemaChangesAt(v))
  return Object.fromEntries(Object.entries(out).filter((entry): entry is [string, string] => entry[1] !== null))
}

export const SCHEMA_V1: Record<string, string> = /* @__PURE__ */ schemaAt(1)
/** Version 2: the compact search index (search/index/index-rows.ts) replaces version 1's; it is rebuilt from the records. */
export const SCHEMA_V2_CHANGES: Record<string, string | null> = /* @__PURE__ */ schemaChangesAt(2)
export const SCHEMA_V2: Record<string, string> = /* @__PURE__ */ schemaAt(2)
export const MODULES_VERSION = 3
/** Task handles and the tables of the people, limitations, patterns, spaces and artifacts modules. */
export const SCHEMA_MODULES = /* @__PURE__ */ schemaChangesAt(MODULES_VERSION) as Record<string, string>
export const CONVERSATIONS_VERSION = 4
/** Conversations that sync: messages get their merged order key and stamp, sessions a stamp, outbox entries their document. */
export const SCHEMA_CONVERSATIONS = /* @__PURE__ */ schemaChangesAt(CONVERSATIONS_VERSION) as Record<string, string>
export const SEGMENTS_VERSION = 5
/** Posting segments of bulk writes (search/index/segments.ts); the posting blocks stay as they are. */
export const SCHEMA_SEGMENTS = /* @__PURE__ */ schemaChangesAt(SEGMENTS_VERSION) as Record<string, string>
export const DIRECTORIES_VERSION = 6
/** Directories of posting segments (search/index/segment-dirs.ts); segments written before have none and are read as before. */
export const SCHEMA_DIRECTORIES = /* @__PURE__ */ schemaChangesAt(DIRECTORIES_VERSION) as Record<string, string>
export const BATCHES_VERSION = 7
/** Batch rows of bulk-written documents (search/index/doc-batches.ts); a project's messages are found through its sessions. */
export const SCHEMA_BATCHES = /* @__PURE__ */ schemaChangesAt(BATCHES_VERSION) as Record<string, string>
export const ID_HASHES_VERSION = 8
/** Batch rows found by the hashes of their member ids (search/index/doc-batches.ts `docsById`). */
export const SCHEMA_ID_HASHES = /* @__PURE__ */ schemaChangesAt(ID_HASHES_VERSION) as Record<string, string>
export const ID_PREFIXES_VERSION = 9
/**
 * Batch rows of ids with a long shared prefix found by it (search/index/doc-batches.ts `idPrefixes`),
 * one index key per row instead of a hash per member; nothing stored changes, so no upgrade runs.
 */
export const SCHEMA_ID_PREFIXES = /* @__PURE__ */ schemaChangesAt(ID_PREFIXES_VERSION) as Record<string, string>

/** The current schema version: the highest any manifest declares a table at (a new kind's tables bring the next). */
export const SCHEMA_VERSION = Math.max(...DECLARED.flatMap((tables) => Object.values(tables).flatMap((specs) => Object.keys(specs).map(Number))))
/** The tables of the current schema version: table → Dexie index spec. */
export const SCHEMA: Record<string, string> = /* @__PURE__ */ schemaAt(SCHEMA_VERSION)
/** Every table name, for transactions that span the whole store (import, purge). */
export const ALL_TABLES = /* @__PURE__ */ Object.keys(SCHEMA)

/** The database of one app and user. */
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
  // (search/*, runtime/journal.ts, runs.ts, tasks.ts, usage.ts, lessons.ts, turns.ts).

  constructor(name: string, deps: { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange; rebuildIndex?: (tx: Transaction) => Promise<void> }) {
    super(name, {
      ...(deps.indexedDB ? { indexedDB: deps.indexedDB } : {}),
      ...(deps.IDBKeyRange ? { IDBKeyRange: deps.IDBKeyRange } : {}),
      chromeTransactionDurability: 'relaxed',
    })
    for (let version = 1; version <= SCHEMA_VERSION; version++) {
      const upgrades = [
        ...(version === 2
          ? [(tx: Transaction) => (deps.rebuildIndex ? deps.rebuildIndex(tx) : tx.table('meta').put({ key: INDEX_REBUILD_KEY, value: true }))]
          : []),
        ...KINDS.flatMap((k) => (k as { upgrades?: KindManifest['upgrades'] }).upgrades?.[version] ?? []),
        // Outbox entries written before conversations synced belong to the project document.
        ...(version === CONVERSATIONS_VERSION
          ? [
              (tx: Transaction) =>
                tx
                  .table('outbox')
                  .toCollection()
                  .modify((o: OutboxRow) => void (o.doc ??= '')),
            ]
          : []),
      ]
      const stores = this.version(version).stores(version === 1 ? SCHEMA_V1 : schemaChangesAt(version))
      if (upgrades.length > 0)
        stores.upgrade(async (tx) => {
          for (const upgrade of upgrades) await upgrade(tx)
        })
    }
    for (const kind of KINDS) for (const middleware of (kind as { middleware?: KindManifest['middleware'] }).middleware ?? []) this.use(middleware)
    // What syncs is stored well-formed (a lone surrogate as U+FFFD), so the writer holds what every receiver will.
    this.use(wellFormedTextMiddleware(new Set(KINDS.flatMap((k) => ('mirrored' in k ? Object.keys(k.tables) : [])))))
    // Nothing reads the store through Dexie's live queries: their change tracking (and its broadcast on every commit) is dropped.
    this.unuse({ stack: 'dbcore', name: 'Observability' })
    this.unuse({ stack: 'dbcore', name: 'Cache' })
  }
}

/**
 * The name of the IndexedDB database a store of one app for one user is created in. `enable`
 * and `rekey` end by moving the store into `engram@<generation>:<appId>:<userId>` and deleting
 * this one (docs/encryption.md); the store opens whichever is current.
 */
export function databaseName(appId: string, userId: string): string {
  return `engram:${appId}:${userId}`
}

/** @throws MemoryError `conflict` when the database `name` was written by a newer schema than `verno`. */
export async function refuseNewerSchema(factory: IDBFactory | undefined, name: string, verno: number): Promise<void> {
  if (typeof factory?.databases !== 'function') return
  const stored = (await factory.databases()).find((d) => d.name === name)?.version
  // Dexie stores version N as IndexedDB version N × 10.
  if (stored !== undefined && stored / 10 > verno) {
    throw new MemoryError('conflict', `Database ${name} was written by a newer Engram (schema ${stored / 10} > ${verno}); update the app`)
  }
}
