import { Dexie } from 'dexie'
import type { Fact } from './facts.js'
import { appendVersion, deleteVersionsOf } from './facts-history.js'
import type { FactRow, FactVersionRow } from '../store/rows.js'
import type { IndexedDoc, StoreContext } from '../store/store-context.js'
import type { Origin } from '../store/change-feed.js'
import type { WriteScope } from '../store/write.js'
import { factText } from '../search/index/fact-text.js'

/**
 * The stable id of a fact: derived from (projectId, key) so the same key
 * written on two devices is one record everywhere.
 *
 * @example factId('user', 'name') // 'user/name'
 */
export function factId(projectId: string, key: string): string {
  return `${encodeURIComponent(projectId)}/${encodeURIComponent(key)}`
}

/** The multi-entry index keys that make tag lookups per project. */
export function tagKeysOf(projectId: string, tags: readonly string[]): string[] {
  return tags.map((tag) => `${projectId}\u0001${tag}`)
}

/** Tables every fact write touches (the index's tables included). */
export function factTables(ctx: StoreContext): string[] {
  return ['projects', 'facts', 'factVersions', ...ctx.index.tables]
}

/** The public shape of a stored fact (no index or clock fields). */
export function toFact(row: FactRow): Fact {
  const fact: Fact = {
    id: row.id,
    projectId: row.projectId,
    key: row.key,
    value: row.value,
    confidence: row.confidence,
    tags: [...row.tags],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    version: row.version,
  }
  if (row.source !== undefined) fact.source = { ...row.source }
  if (row.deletedAt !== undefined) fact.deletedAt = row.deletedAt
  if (row.expiresAt !== undefined) fact.expiresAt = row.expiresAt
  return fact
}

/** The content-free tombstone that replaces a purged fact of a synced project. */
export function purgedTombstone(row: FactRow, now: number, hlc: string): FactRow {
  return {
    id: row.id,
    projectId: row.projectId,
    key: row.key,
    value: null,
    confidence: 0,
    tags: [],
    tagKeys: [],
    createdAt: row.createdAt,
    updatedAt: now,
    deletedAt: now,
    version: row.version + 1,
    hlc,
    purged: true,
  }
}

/**
 * Removes a fact with its history and index entry inside a write transaction;
 * with `tombstone`, that content-free row takes its place (synced projects).
 */
export async function purgeFactRow(ctx: StoreContext, w: WriteScope, row: FactRow, tombstone: FactRow | undefined): Promise<void> {
  await (tombstone ? ctx.db.facts.put(tombstone) : ctx.db.facts.delete([row.projectId, row.key]))
  await deleteVersionsOf(ctx, row.projectId, row.key)
  await ctx.index.remove(w, `fact:${row.id}`)
  w.change('facts', 'delete', row.id, row.projectId)
}

/** What a caller of {@link storeFactRow} may have started before it knew the stored row. */
export interface EarlyFactWrites {
  /** The index entry of the new state, put (not fresh) already. */
  indexed?: Promise<void>
  /** The key's newest stored version, read already. */
  latest?: FactVersionRow
}

/**
 * Writes a new state of a fact inside a write transaction: the row, its
 * history version (closing the previous one), the search index entry and the
 * change, all issued at once (one round trip for a new fact). `row.version`
 * must be the stored version + 1; `fresh` says no row of this fact was stored
 * before, so the index looks up no older entry to replace. Every part is a
 * chain of Dexie promises (no native async function runs beside another), so
 * a call nested in an outer transaction keeps it.
 */
export function storeFactRow(ctx: StoreContext, w: WriteScope, row: FactRow, origin: Origin, fresh = false, early: EarlyFactWrites = {}): Promise<void> {
  const docId = `fact:${row.id}`
  const live = row.deletedAt === undefined
  const indexing = live ? (early.indexed ?? ctx.index.put(w, factDoc(row), { fresh })) : ctx.index.remove(w, docId)
  w.change('facts', live ? 'put' : 'delete', row.id, row.projectId)
  return Dexie.Promise.all([ctx.db.facts.put(row), appendVersion(ctx, row, origin, early.latest), indexing]).then(() => undefined)
}

/** The search-index document of a live fact. */
export function factDoc(row: Pick<FactRow, 'id' | 'projectId' | 'key' | 'value' | 'updatedAt'>): IndexedDoc {
  return { docId: `fact:${row.id}`, kind: 'fact', projectId: row.projectId, text: factText(row.key, row.value), createdAt: row.updatedAt }
}
