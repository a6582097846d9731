import { invalidInput, MemoryError } from './errors.js'
import { isHlc } from './hlc.js'
import type { StoreContext } from './store-context.js'
import { checkId, type Json } from './validate.js'
import type { WriteScope } from './write.js'
import type { MirroredKind } from '../catalog/lists.js'

/**
 * One mirrored record as it travels between devices: the stored row without
 * device-local fields (index keys, local version numbers), with its HLC stamp.
 * Tombstones are records too (`row.deletedAt` set).
 */
export interface MirroredRecord {
  kind: MirroredKind
  projectId: string
  /** Stable across devices: a fact's `factId(projectId, key)`, a block's label, a summary's id, a pattern's `patternId(projectId, norm)`. */
  id: string
  /** Hybrid-logical-clock stamp of the write that made this state (`row.hlc`). */
  hlc: string
  row: { [field: string]: Json }
}

/**
 * Everything sync, replication and import need to know about one mirrored
 * kind. Adding a synced kind is one descriptor in `synced-kinds.ts`.
 */
export interface SyncedKind<Row> {
  readonly kind: MirroredKind
  /** Tables `apply` writes (the search index's are added by the caller). */
  readonly tables: readonly string[]
  /** The stored row an id names (tombstones included), or undefined. */
  read(ctx: StoreContext, projectId: string, id: string): Promise<Row | undefined>
  /** Every stored row of a project, tombstones included. */
  readProject(ctx: StoreContext, projectId: string): Promise<Row[]>
  /** The stored rows of one session document (messages only: their document is the session's). */
  readDoc?(ctx: StoreContext, projectId: string, doc: string): Promise<Row[]>
  /** A stored row as it travels (device-local fields dropped). */
  toRecord(row: Row): MirroredRecord
  /**
   * Checks a record from another device or a dump exactly like a local write
   * (fields, sizes, limits, times, stamp) and returns the row to store; fields
   * it does not know are refused.
   * @throws MemoryError `invalid_input`, `limit_exceeded`.
   */
  check(record: MirroredRecord): Row
  /**
   * Stores a checked row last-writer-wins by HLC inside the caller's write.
   * @returns true when it was newer than the stored copy and was stored.
   * @throws MemoryError `invalid_input` when it would touch a row of another project.
   */
  apply(ctx: StoreContext, w: WriteScope, row: Row): Promise<boolean>
}

/** Copies the fields of a stored row that travel (undefined ones and `drop`ped ones left out). */
export function travelling(row: object, drop: readonly string[] = []): { [field: string]: Json } {
  const out: { [field: string]: Json } = {}
  for (const [k, v] of Object.entries(row)) if (v !== undefined && !drop.includes(k)) out[k] = v as Json
  return out
}

/**
 * Checks the envelope of a mirrored record: its kind, project, id and stamp,
 * that its row names the same project and stamp, and that the row has no field
 * outside `allowed`.
 * @throws MemoryError `invalid_input`.
 */
export function checkEnvelope(record: MirroredRecord, kind: MirroredKind, allowed: readonly string[]): { [field: string]: Json } {
  if (typeof record !== 'object' || record === null) throw invalidInput('A mirrored record must be an object { kind, projectId, id, hlc, row }')
  if (record.kind !== kind) throw invalidInput(`A ${kind} record has kind ${JSON.stringify(record.kind)}`)
  checkId('record.projectId', record.projectId)
  checkId('record.id', record.id)
  checkStamp(record.hlc)
  const row = record.row
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw invalidInput('record.row must be an object')
  for (const field of Object.keys(row)) {
    if (!allowed.includes(field)) throw invalidInput(`A ${kind} record has the unknown field ${JSON.stringify(field)}`)
  }
  if (row.projectId !== undefined && row.projectId !== record.projectId)
    throw invalidInput(`record.row.projectId ${JSON.stringify(row.projectId)} differs from record.projectId`)
  if (row.hlc !== undefined && row.hlc !== record.hlc) throw invalidInput('record.row.hlc differs from record.hlc')
  return row
}

/** Checks the form of a hybrid-logical-clock stamp (see hlc.ts). @throws MemoryError `invalid_input`. */
export function checkStamp(stamp: unknown): string {
  if (!isHlc(stamp)) throw invalidInput(`Malformed clock stamp ${JSON.stringify(stamp)}`)
  return stamp
}

/** Refuses a record that would overwrite a row of another project (a global id reused across projects). */
export function checkSameProject(kind: MirroredKind, id: string, stored: { projectId: string } | undefined, projectId: string): void {
  if (stored !== undefined && stored.projectId !== projectId) {
    throw new MemoryError(
      'invalid_input',
      `A ${kind} record of project ${JSON.stringify(projectId)} names ${JSON.stringify(id)}, which belongs to another project`,
    )
  }
}
