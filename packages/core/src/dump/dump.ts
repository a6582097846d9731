import { encodeArtifactRows } from '../artifacts/dump-artifacts.js'
import { MemoryError } from '../store/errors.js'
import { collectionOf, loadProjectScope, MEMORY_TABLES, type ProjectScope } from './dump-scope.js'
import { DUMP_FORMAT, DUMP_VERSION, type Dump } from './dump-validate.js'
import { messageStamp } from '../messages/message-order.js'
import type { MessageRow } from '../store/rows.js'
import type { BackgroundProblem } from '../store/status.js'
import { estimateStorage, type StorageEstimate } from '../store/storage-estimate.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId } from '../store/validate.js'
import { read } from '../store/write.js'

export type { Dump } from './dump-validate.js'

/** Counts and approximate size (UTF-8 bytes of JSON text) of a store or project. */
export interface Stats {
  facts: number
  blocks: number
  sessions: number
  messages: number
  passages: number
  bytes: number
  /** The store's recent background failures (embedder, summarizer, extractor, sync), as in `memory.status`. */
  problems: BackgroundProblem[]
  /** The origin's bytes used and quota as the browser estimates them (absent where there is no estimate, e.g. Node). */
  storage?: StorageEstimate
}

/** stats and export of a store (import is the importer module's). */
export interface DumpApi {
  /**
   * Counts of live facts and blocks, sessions, messages and passages, and the approximate
   * size of all memory as JSON, of one project or (without `projectId`) the whole store;
   * in a browser also the origin's bytes used and quota (`storage`).
   * @throws MemoryError `not_found` for an unknown project, `invalid_input` on a bad id.
   */
  stats(projectId?: string): Promise<Stats>
  /**
   * Exports every memory table of one project or the whole store as a JSON-safe,
   * versioned {@link Dump}, read in one consistent snapshot.
   * @throws MemoryError `not_found` for an unknown project, `invalid_input` on a bad id.
   */
  export(projectId?: string): Promise<Dump>
}

type Row = Record<string, unknown>

/** Creates stats/export/import for a store. */
export function createDump(ctx: StoreContext): DumpApi {
  const { db } = ctx

  /** Reads every memory table of the scope in one read-only transaction. */
  async function snapshot(projectId: string | undefined): Promise<Record<string, Row[]>> {
    if (projectId !== undefined) checkId('projectId', projectId)
    return read(ctx, MEMORY_TABLES, async () => {
      let scope: ProjectScope | undefined
      if (projectId !== undefined) {
        if (!(await db.projects.get(projectId))) throw new MemoryError('not_found', `No project with id ${JSON.stringify(projectId)}`)
        scope = await loadProjectScope(db, projectId)
      }
      const tables: Record<string, Row[]> = {}
      for (const table of MEMORY_TABLES) tables[table] = dumped(table, await collectionOf(db, table, scope).toArray())
      return tables
    })
  }

  return {
    async stats(projectId) {
      const [tables, storage] = await Promise.all([snapshot(projectId), estimateStorage()])
      const live = (rows: Row[] | undefined) => (rows ?? []).filter((r) => r.deletedAt === undefined).length
      let bytes = 0
      // An artifact's Blob counts by its size (as JSON it would be `{}`).
      for (const rows of Object.values(tables))
        for (const row of rows) bytes += utf8Length(JSON.stringify(row)) + 1 + (row.data instanceof Blob ? row.data.size : 0)
      return {
        facts: live(tables.facts),
        blocks: live(tables.blocks),
        sessions: tables.sessions?.length ?? 0,
        messages: tables.messages?.length ?? 0,
        passages: tables.passages?.length ?? 0,
        bytes,
        problems: ctx.status.snapshot().problems,
        ...(storage ? { storage } : {}),
      }
    },

    async export(projectId) {
      const tables = await snapshot(projectId)
      if (tables.artifacts !== undefined) tables.artifacts = await encodeArtifactRows(tables.artifacts)
      const dump: Dump = { format: DUMP_FORMAT, version: DUMP_VERSION, exportedAt: ctx.now(), tables }
      if (projectId !== undefined) dump.projectId = projectId
      return dump
    },
  }
}

/**
 * Rows as a dump holds them: messages with their stamp (`messageStamp`: appends are stored
 * without it), sessions without `lastAt`, which speaks for this store's rows only (import
 * keeps the stored one). Dumps stay as they were before appends left out their stamps.
 */
function dumped(table: string, rows: Row[]): Row[] {
  if (table === 'messages') return rows.map((m) => (m.hlc === undefined ? { ...m, hlc: messageStamp(m as unknown as MessageRow) } : m))
  if (table === 'sessions')
    return rows.map((s) => {
      if (s.lastAt === undefined) return s
      const { lastAt: _local, ...rest } = s
      return rest
    })
  return rows
}

/** UTF-8 byte length of a string without encoding it (surrogate pairs count 4). */
function utf8Length(text: string): number {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) continue
    if (unit < 0x800) bytes += 1
    else if (unit >= 0xd800 && unit <= 0xdbff)
      bytes += 1 // the pair's two units count 2 + 2 = 4
    else if (unit >= 0xdc00 && unit <= 0xdfff) bytes += 1
    else bytes += 2
  }
  return bytes
}
