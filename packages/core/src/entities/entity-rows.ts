import { entityText } from '../search/index/knowledge-text.js'
import type { IndexedDoc, StoreContext } from '../store/store-context.js'
import type { Provenance } from '../relations/relation-rows.js'
import type { ObservationSet } from './observation-set.js'

/** A named thing of a type, per project: its aliases and free-text observations. */
export interface Entity {
  /** `encodeURIComponent(projectId)/encodeURIComponent(type key)/encodeURIComponent(name key)`: one record for one name everywhere. */
  id: string
  projectId: string
  /** `person`, `place`, `organisation`, `project`, or the app's own type. */
  type: string
  name: string
  /** Other names it is found by (a merged entity's name becomes one). */
  aliases: string[]
  /** Free-text observations, oldest first. */
  observations: string[]
  createdAt: number
  updatedAt: number
  /** Set when it was merged into another entity: lookups by its names lead there. */
  mergedInto?: string
  /** Where it was learned: the message ids of the writes that made or added to it (the latest 100), and the latest source. */
  provenance?: Provenance
}

/** An entity as stored: its name keys (indexed), its clock stamp, its tombstone, and the stamps its observations merge by. */
export interface EntityRow extends Entity, Omit<ObservationSet, 'observations'> {
  /** `${projectId}\u0001${name key}` of its name and every alias. */
  nameKeys: string[]
  hlc: string
  deletedAt?: number
}

/** The table of entity rows. */
export const entityTable = (ctx: StoreContext) => ctx.db.table<EntityRow, string>('entities')

/**
 * The key a name is found by: case and accents folded, Unicode-normalised, punctuation
 * and spacing collapsed. "Dána  O'Neil" and "dana o neil" are one key.
 */
export function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/** The stable id of the entity of `type` named `name` in a project. */
export function entityId(projectId: string, type: string, name: string): string {
  return `${encodeURIComponent(projectId)}/${encodeURIComponent(nameKey(type))}/${encodeURIComponent(nameKey(name))}`
}

/** The indexed lookup keys of a name in a project. */
export function nameKeyOf(projectId: string, name: string): string {
  return `${projectId}\u0001${nameKey(name)}`
}

/** The index keys of an entity's name and aliases (distinct). */
export function nameKeysOf(projectId: string, name: string, aliases: readonly string[]): string[] {
  return [...new Set([name, ...aliases].map((n) => nameKeyOf(projectId, n)))]
}

/** The public shape of a stored entity. */
export function toEntity(row: EntityRow): Entity {
  const out: Entity = {
    id: row.id,
    projectId: row.projectId,
    type: row.type,
    name: row.name,
    aliases: [...row.aliases],
    observations: [...row.observations],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
  if (row.mergedInto !== undefined) out.mergedInto = row.mergedInto
  if (row.provenance !== undefined) {
    out.provenance = {}
    if (row.provenance.messageIds) out.provenance.messageIds = [...row.provenance.messageIds]
    if (row.provenance.source !== undefined) out.provenance.source = row.provenance.source
  }
  return out
}

/** The search-index document of a live entity (merged ones are found through the entity they joined). */
export function entityDoc(row: EntityRow): IndexedDoc {
  return { docId: `entity:${row.id}`, kind: 'entity', projectId: row.projectId, text: entityText(row), createdAt: row.createdAt }
}

/** Whether an entity row is live: not deleted and not merged into another. */
export function isLiveEntity(row: EntityRow | undefined): row is EntityRow {
  return row !== undefined && row.deletedAt === undefined && row.mergedInto === undefined
}
