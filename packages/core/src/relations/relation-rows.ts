import { relationText } from '../search/index/knowledge-text.js'
import type { IndexedDoc, StoreContext } from '../store/store-context.js'

/** The object of a relation when it is not an entity: a literal value. */
export type Literal = string | number | boolean

/** Where a relation came from. */
export interface Provenance {
  /** The messages it was learned from. */
  messageIds?: string[]
  /** What asserted it: a tool, an extractor, an import, a person. */
  source?: string
}

/**
 * One assertion: subject — predicate — object (an entity, or a literal `value`), valid from
 * `validFrom` until `validTo` (open when absent).
 */
export interface Relation {
  id: string
  projectId: string
  /** The subject entity's id (its canonical id, as of the write). */
  subject: string
  predicate: string
  /** The object entity's id, when the object is an entity. */
  object?: string
  /** The object, when it is a literal. */
  value?: Literal
  validFrom: number
  /** When it stopped being true: the end it was given, or the `validFrom` of the assertion that replaced it (single-valued predicates). */
  validTo?: number
  /** The relation whose `validFrom` closed this one, when one did. */
  closedBy?: string
  /** In [0, 1]. */
  confidence: number
  provenance?: Provenance
  createdAt: number
  updatedAt: number
}

/**
 * A relation as stored. `statedTo` is the end its writer gave (it travels); `closedAt` and
 * `closedBy` are derived on each device from the assertions of the same subject and
 * single-valued predicate (they never travel), so every device holding the same assertions
 * stores the same windows.
 */
export interface RelationRow {
  id: string
  projectId: string
  subjectId: string
  predicate: string
  objectId?: string
  value?: Literal
  validFrom: number
  statedTo?: number
  closedAt?: number
  closedBy?: string
  confidence: number
  provenance?: Provenance
  createdAt: number
  updatedAt: number
  deletedAt?: number
  hlc: string
}

/** The table of relation rows. */
export const relationTable = (ctx: StoreContext) => ctx.db.table<RelationRow, string>('relations')

/** When a stored relation stops being true (undefined: still true). */
export function validToOf(row: Pick<RelationRow, 'statedTo' | 'closedAt'>): number | undefined {
  if (row.statedTo === undefined) return row.closedAt
  if (row.closedAt === undefined) return row.statedTo
  return Math.min(row.statedTo, row.closedAt)
}

/** Whether a live relation holds at time `t`. */
export function holdsAt(row: RelationRow, t: number): boolean {
  if (row.deletedAt !== undefined || row.validFrom > t) return false
  const to = validToOf(row)
  return to === undefined || t < to
}

/** The public shape of a stored relation. */
export function toRelation(row: RelationRow): Relation {
  const out: Relation = {
    id: row.id,
    projectId: row.projectId,
    subject: row.subjectId,
    predicate: row.predicate,
    validFrom: row.validFrom,
    confidence: row.confidence,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
  if (row.objectId !== undefined) out.object = row.objectId
  if (row.value !== undefined) out.value = row.value
  const to = validToOf(row)
  if (to !== undefined) out.validTo = to
  if (row.closedBy !== undefined && row.closedAt !== undefined && to === row.closedAt) out.closedBy = row.closedBy
  if (row.provenance !== undefined) {
    out.provenance = {}
    if (row.provenance.messageIds) out.provenance.messageIds = [...row.provenance.messageIds]
    if (row.provenance.source !== undefined) out.provenance.source = row.provenance.source
  }
  return out
}

/** The search-index document of a live relation, in words: "Dana works at Initech". */
export function relationDoc(row: RelationRow, subjectName: string, objectName: string | undefined): IndexedDoc {
  const text = relationText(subjectName, row.predicate, objectName ?? String(row.value))
  return { docId: `relation:${row.id}`, kind: 'relation', projectId: row.projectId, text, createdAt: row.validFrom }
}
