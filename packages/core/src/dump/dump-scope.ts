import { Dexie, type Collection, type Table } from 'dexie'
import { maxKey } from '../store/keys.js'
import { messagesOf } from '../messages/message-order.js'
import { MEMORY_TABLES, PROJECT_ROWS } from '../catalog/lists.js'
import type { EngramDb } from '../catalog/schema.js'

export { MEMORY_TABLES }
/** A table a dump may hold. */
export type MemoryTable = (typeof MEMORY_TABLES)[number]

type Row = Record<string, unknown>

/** What belongs to one project: its id and the sessions and runs it owns (for rows without projectId). */
export interface ProjectScope {
  projectId: string
  sessionIds: Set<string>
  runIds: Set<string>
}

/** The key path of a table's primary key (fields) and whether it auto-increments. */
export function primaryKeyOf(db: EngramDb, table: string): { fields: string[]; auto: boolean } {
  const pk = db.table(table).schema.primKey
  const path = pk.keyPath
  return { fields: path === undefined || path === null ? [] : Array.isArray(path) ? path : [path], auto: Boolean(pk.auto) }
}

/** Loads the sessions and runs of a project, so journal, checkpoints and tool events can be scoped. Run in a transaction over sessions and runs. */
export async function loadProjectScope(db: EngramDb, projectId: string): Promise<ProjectScope> {
  const [sessionIds, runs] = await Promise.all([
    collectionOf(db, 'sessions', { projectId, sessionIds: new Set(), runIds: new Set() }).primaryKeys(),
    db
      .table('runs')
      .filter((r: Row) => r.projectId === projectId)
      .primaryKeys(),
  ])
  return { projectId, sessionIds: new Set(sessionIds as string[]), runIds: new Set(runs as string[]) }
}

/** True when a row belongs to the scope's project. */
export function belongsTo(table: string, row: Row, scope: ProjectScope): boolean {
  if (table === 'projects') return row.id === scope.projectId
  if (typeof row.projectId === 'string') return row.projectId === scope.projectId
  if (typeof row.sessionId === 'string' && scope.sessionIds.has(row.sessionId)) return true
  return typeof row.runId === 'string' && scope.runIds.has(row.runId)
}

/** The rows of a table in a scope (the whole table without one), as a Dexie collection. */
export function collectionOf(db: EngramDb, table: string, scope: ProjectScope | undefined): Collection<Row, unknown> {
  const t = db.table(table) as Table<Row, unknown>
  if (scope === undefined) return t.toCollection()
  if (table === 'projects') return t.where(':id').equals(scope.projectId)
  // Messages are kept by session, not by project (one index less to write per message).
  if (table === 'messages') return (messagesOf(db, [...scope.sessionIds]) as unknown as Collection<Row, unknown>).filter((row) => belongsTo(table, row, scope))
  const index = PROJECT_ROWS.has(table) ? projectIndex(t) : undefined
  if (index === undefined) return t.filter((row) => belongsTo(table, row, scope))
  if (index.width === 1) return t.where(index.name).equals(scope.projectId)
  const rest = index.width - 1
  // One fresh array per position: IndexedDB refuses a key that holds the same array object twice (maxKey() is one).
  const upper = Array.from({ length: rest }, () => maxKey())
  return t.where(index.name).between([scope.projectId, ...Array<unknown>(rest).fill(Dexie.minKey)], [scope.projectId, ...upper])
}

/** An index (or the primary key) whose first field is projectId. */
function projectIndex(t: Table<Row, unknown>): { name: string; width: number } | undefined {
  const candidates = [t.schema.primKey, ...t.schema.indexes]
  for (const idx of candidates) {
    const path = idx.keyPath
    if (path === 'projectId') return { name: idx === t.schema.primKey ? ':id' : idx.name, width: 1 }
    if (Array.isArray(path) && path[0] === 'projectId' && !idx.multi) return { name: idx === t.schema.primKey ? ':id' : idx.name, width: path.length }
  }
  return undefined
}
