import type { ArtifactRow } from '../artifacts/artifacts.js'
import { checkArtifactBudget } from '../artifacts/artifacts.js'
import { importDump } from '../dump/dump-import.js'
import { MEMORY_TABLES } from '../dump/dump-scope.js'
import { DUMP_FORMAT, DUMP_VERSION, type Dump, validateDump } from '../dump/dump-validate.js'
import { currentDatabaseName } from '../encryption/database-names.js'
import { createCryptoSlot, cryptoMiddleware, ENCRYPTION_META_KEY } from '../encryption/slot.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { mapError } from '../store/map-error.js'
import { linkPerson } from '../people/person-links.js'
import { databaseName, EngramDb, refuseNewerSchema } from '../catalog/schema.js'
import type { StoreContext } from '../store/store-context.js'
import { MIRRORED_KINDS } from '../catalog/lists.js'
import { loadSyncedKinds } from './synced-kinds.js'
import { checkId } from '../store/validate.js'
import { write } from '../store/write.js'

/** What {@link adoptStore} did. */
export interface AdoptResult {
  /** Rows of the kinds that are kept as they are (projects, sessions, messages, journal, runs, tasks, …) written. */
  imported: number
  /** Facts, blocks, summaries, patterns and artifacts taken because they were newer (by clock) than this store's. */
  merged: number
}

type Row = Record<string, unknown>

/** Tables merged record by record, latest clock wins (the mirrored kinds); facts' history stays with the old store. */
const MERGED = new Set<string>([...MIRRORED_KINDS, 'factVersions'])

/**
 * Merges the memory of another user's database of the same app on this device
 * (an anonymous user who has now signed in) into this store, in one
 * transaction: projects, sessions, messages, journal, runs, tasks, usage,
 * lessons, turns, passages, limitations, spaces and people are kept (merged
 * like `import({ mode: 'merge' })`); facts, blocks, summaries, patterns and
 * artifacts are merged by latest clock; `otherUserId` becomes an alias of this
 * user in `people`. The other database is only read, and stays until the app
 * deletes it. Running it again is harmless; an interrupted run wrote nothing,
 * and running it again does all of it.
 *
 * @throws MemoryError `invalid_input` (bad id, this store's own user, an alias cycle, a malformed row in
 * the other database), `not_found` (no database of that user), `conflict` (written by a newer Engram, or
 * a message or journal record that differs at the same place), `quota_exceeded`.
 */
export async function adoptStore(ctx: StoreContext, otherUserId: string): Promise<AdoptResult> {
  checkId('otherUserId', otherUserId)
  if (otherUserId === ctx.userId) throw invalidInput('A store cannot adopt its own user')
  ctx.assertOpen()
  const descriptors = await loadSyncedKinds()
  const tables = await readOtherStore(ctx, otherUserId)
  const kept: Dump = { format: DUMP_FORMAT, version: DUMP_VERSION, exportedAt: ctx.now(), tables: {} }
  for (const [name, rows] of Object.entries(tables)) if (!MERGED.has(name) && rows.length > 0) kept.tables[name] = rows
  validateDump(ctx.db, kept)
  const writeTables = [...MEMORY_TABLES, 'journalSessions', 'meta', 'outbox', ...ctx.index.tables]
  return write(ctx, writeTables, async (w) => {
    // Projects this store has keep their own row (name, sync).
    const projects = (kept.tables.projects ?? []) as Row[]
    const stored = await ctx.db.projects.bulkGet(projects.map((p) => p.id as string))
    kept.tables.projects = projects.filter((_, i) => stored[i] === undefined)
    const imported = await importDump(ctx, kept, 'merge')
    let merged = 0
    for (const kind of MIRRORED_KINDS) {
      const descriptor = descriptors[kind]
      for (const row of tables[kind] ?? []) {
        if (await descriptor.apply(ctx, w, descriptor.check(descriptor.toRecord(row)))) merged++
        if (kind === 'artifacts') await adoptBytes(ctx, row as unknown as ArtifactRow)
      }
    }
    if ((tables.artifacts ?? []).length > 0) await checkArtifactBudget(ctx, 0)
    // After the import, whose people rows must not overwrite the alias; a cycle rolls all of it back.
    await linkPerson(ctx, (id) => w.change('people', 'put', id, ''), otherUserId, ctx.userId)
    await ctx.db.meta.put({ key: `adopted:${otherUserId}`, value: { at: ctx.now(), imported, merged } })
    return { imported, merged }
  })
}

/** Keeps the bytes of an adopted artifact when this store's copy (same SHA-256) lacks them. */
async function adoptBytes(ctx: StoreContext, row: ArtifactRow): Promise<void> {
  if (row.data === undefined || row.deletedAt !== undefined) return
  const table = ctx.db.table<ArtifactRow, string>('artifacts')
  const here = await table.get(row.id)
  if (here && here.deletedAt === undefined && here.data === undefined && here.sha256 === row.sha256) {
    await table.put({ ...here, data: row.data, localSize: row.data.size })
  }
}

/** Every memory table of another user's database, read in one snapshot; the database is closed after. */
async function readOtherStore(ctx: StoreContext, otherUserId: string): Promise<Record<string, Row[]>> {
  const factory = ctx.dbDeps?.indexedDB ?? globalThis.indexedDB
  try {
    const name = await currentDatabaseName(factory, databaseName(ctx.appId, otherUserId), ctx.appId, otherUserId)
    if (typeof factory?.databases === 'function' && !(await factory.databases()).some((d) => d.name === name)) {
      throw new MemoryError('not_found', `No database of user ${JSON.stringify(otherUserId)} for app ${JSON.stringify(ctx.appId)} on this device`)
    }
    await refuseNewerSchema(factory, name, ctx.db.verno)
    const other = new EngramDb(name, ctx.dbDeps ?? {})
    const crypto = createCryptoSlot()
    other.use(cryptoMiddleware(crypto))
    try {
      await other.open()
      // A database encrypted at rest opens with this store's key (WebCrypto: before the read transaction).
      if ((await other.meta.get(ENCRYPTION_META_KEY)) !== undefined) {
        if (!ctx.crypto?.unlockOther)
          throw new MemoryError('crypto', `The database of user ${JSON.stringify(otherUserId)} is encrypted at rest: open this store with its key to adopt it`)
        await ctx.crypto.unlockOther(other, crypto)
      }
      return await other.transaction('r', [...MEMORY_TABLES, 'meta'], async () => {
        // Without databases() to ask, an empty database made by opening it means there was none.
        if (!(await other.meta.get('deviceId')))
          throw new MemoryError('not_found', `No database of user ${JSON.stringify(otherUserId)} for app ${JSON.stringify(ctx.appId)} on this device`)
        const out: Record<string, Row[]> = {}
        for (const table of MEMORY_TABLES) out[table] = await other.table(table).toArray()
        return out
      })
    } finally {
      other.close()
    }
  } catch (error) {
    throw mapError(error)
  }
}
