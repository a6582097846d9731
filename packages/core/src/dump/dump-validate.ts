import { invalidInput } from '../store/errors.js'
import { MEMORY_TABLES, primaryKeyOf, type MemoryTable } from './dump-scope.js'
import type { EngramDb } from '../catalog/schema.js'
import { checkId, describe } from '../store/validate.js'

/** The format tag of every dump. */
export const DUMP_FORMAT = 'engram-dump'
/** The dump version this build writes and reads. */
export const DUMP_VERSION = 1

/** A JSON-safe, versioned export of a store or one project. */
export interface Dump {
  format: 'engram-dump'
  version: number
  exportedAt: number
  projectId?: string
  tables: Record<string, unknown[]>
}

/** A field's type; `seq` is an integer ≥ 1, `unit` a number in [0, 1], an array lists the allowed strings. */
type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'key' | 'any' | 'array' | 'seq' | 'unit' | readonly string[]

/** Fields every row of a table must have (beyond its primary key, which is always required). */
const REQUIRED: Partial<Record<MemoryTable, Record<string, FieldType>>> = {
  projects: { id: 'string', name: 'string', sync: 'object', createdAt: 'number', updatedAt: 'number' },
  facts: { id: 'string', projectId: 'string', key: 'string', value: 'any', version: 'number', createdAt: 'number', updatedAt: 'number' },
  factVersions: { projectId: 'string', key: 'string', version: 'number', validFrom: 'number', deleted: 'boolean' },
  blocks: { projectId: 'string', label: 'string', value: 'string', limit: 'number' },
  sessions: { id: 'string', projectId: 'string', status: ['active', 'closed'], startedAt: 'number', lastActiveAt: 'number' },
  messages: {
    id: 'string',
    sessionId: 'string',
    projectId: 'string',
    seq: 'seq',
    role: ['user', 'assistant', 'system', 'tool'],
    content: 'string',
    tokens: 'number',
    createdAt: 'number',
  },
  summaries: { id: 'string', projectId: 'string', kind: ['session', 'project'], text: 'string', createdAt: 'number' },
  passages: { id: 'string', projectId: 'string', text: 'string', createdAt: 'number' },
  journal: { sessionId: 'string', seq: 'seq', kind: 'string', occurredAt: 'number' },
  runs: { status: 'string' },
  checkpoints: { status: 'string', order: 'number' },
  tasks: { id: 'string', projectId: 'string', status: ['pending', 'done', 'failed', 'cancelled'], dueAt: 'number' },
  lessons: { projectId: 'string', domain: 'string', key: 'string' },
  outcomes: { projectId: 'string' },
  turns: { projectId: 'string', status: 'string' },
  spaces: { id: 'string', name: 'string', sync: 'object', createdAt: 'number', updatedAt: 'number' },
  artifacts: { id: 'string', projectId: 'string', name: 'string', mimeType: 'string', size: 'number', sha256: 'string', createdAt: 'number' },
  people: { id: 'string', createdAt: 'number', updatedAt: 'number' },
  limitations: { title: 'string', status: ['open', 'resolved'], createdAt: 'number', updatedAt: 'number' },
}

/** Fields checked only when present (import fills the defaults of missing ones). */
const OPTIONAL: Partial<Record<MemoryTable, Record<string, FieldType>>> = {
  facts: { tags: 'array', confidence: 'unit' },
  blocks: { readOnly: 'boolean' },
  // Import gives a message with an order key but no stamp the stamp of its key (dump-import.ts).
  messages: { at: 'string', hlc: 'string' },
}

/** Tables whose rows may be scoped to a project without carrying a projectId themselves. */
const UNSCOPED_ROWS = new Set<string>(['journal', 'runs', 'checkpoints', 'toolEvents', 'usage'])

/**
 * Checks a dump completely before anything is written: format, version, table
 * names, that every row is an object with its table's required keys, and that a
 * project dump holds only that project's rows.
 * @returns the number of rows in the dump.
 * @throws MemoryError `invalid_input` naming the first problem found.
 */
export function validateDump(db: EngramDb, dump: unknown): number {
  if (typeof dump !== 'object' || dump === null || Array.isArray(dump)) throw invalidInput(`A dump must be an object, got ${describe(dump)}`)
  const d = dump as Partial<Dump>
  if (d.format !== DUMP_FORMAT) throw invalidInput(`Not an Engram dump: format is ${describe(d.format)}, expected "${DUMP_FORMAT}"`)
  if (d.version !== DUMP_VERSION) throw invalidInput(`Unsupported dump version ${describe(d.version)}; this build reads version ${DUMP_VERSION}`)
  if (typeof d.exportedAt !== 'number' || !Number.isFinite(d.exportedAt)) throw invalidInput('dump.exportedAt must be a number')
  if (d.projectId !== undefined) checkId('dump.projectId', d.projectId)
  const tables = d.tables
  if (typeof tables !== 'object' || tables === null || Array.isArray(tables)) throw invalidInput('dump.tables must be an object of table name → rows')
  let count = 0
  for (const [name, rows] of Object.entries(tables)) {
    if (!(MEMORY_TABLES as readonly string[]).includes(name))
      throw invalidInput(`dump.tables.${name} is not a memory table; known: ${MEMORY_TABLES.join(', ')}`)
    if (!Array.isArray(rows)) throw invalidInput(`dump.tables.${name} must be an array of rows`)
    const fields = requiredFields(db, name as MemoryTable)
    const optional = Object.entries(OPTIONAL[name as MemoryTable] ?? {})
    for (let i = 0; i < rows.length; i++) checkRow(name, i, rows[i], fields, optional, d.projectId)
    count += rows.length
  }
  return count
}

function requiredFields(db: EngramDb, table: MemoryTable): [string, FieldType][] {
  const fields: Record<string, FieldType> = {}
  const pk = primaryKeyOf(db, table)
  if (!pk.auto) for (const f of pk.fields) fields[f] = 'key'
  Object.assign(fields, REQUIRED[table])
  return Object.entries(fields)
}

function checkRow(table: string, i: number, row: unknown, fields: [string, FieldType][], optional: [string, FieldType][], projectId: string | undefined): void {
  const where = `dump.tables.${table}[${i}]`
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw invalidInput(`${where} must be an object, got ${describe(row)}`)
  const r = row as Record<string, unknown>
  for (const [field, type] of fields) {
    const value = r[field]
    if (!hasType(value, type)) throw invalidInput(`${where}.${field} must be ${expected(type)}, got ${describe(value)}`)
  }
  for (const [field, type] of optional) {
    const value = r[field]
    if (value !== undefined && !hasType(value, type)) throw invalidInput(`${where}.${field} must be ${expected(type)} when present, got ${describe(value)}`)
  }
  if (projectId === undefined) return
  const owner = table === 'projects' ? r.id : r.projectId
  if (owner === undefined && UNSCOPED_ROWS.has(table)) return
  if (owner !== projectId) throw invalidInput(`${where} belongs to project ${describe(owner)}, but the dump is of project ${JSON.stringify(projectId)}`)
}

function expected(type: FieldType): string {
  if (Array.isArray(type)) return `one of ${type.map((t) => `"${t}"`).join(', ')}`
  switch (type) {
    case 'key':
      return 'a string or number'
    case 'any':
      return 'present'
    case 'array':
      return 'an array of strings'
    case 'seq':
      return 'an integer ≥ 1'
    case 'unit':
      return 'a number in [0, 1]'
    default:
      return `a ${type as string}`
  }
}

function hasType(value: unknown, type: FieldType): boolean {
  if (Array.isArray(type)) return typeof value === 'string' && type.includes(value)
  switch (type) {
    case 'array':
      return Array.isArray(value) && value.every((v) => typeof v === 'string')
    case 'seq':
      return Number.isInteger(value) && (value as number) >= 1
    case 'unit':
      return typeof value === 'number' && value >= 0 && value <= 1
    case 'any':
      return value !== undefined
    case 'key':
      return (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value))
    case 'object':
      return typeof value === 'object' && value !== null
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    default:
      return typeof value === type
  }
}
