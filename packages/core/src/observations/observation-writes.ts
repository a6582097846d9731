import type { Table } from 'dexie'
import { indexDocs } from '../search/index/index-docs.js'
import { observationDoc } from '../search/index/observation-text.js'
import { newId } from '../store/ids.js'
import type { StoreContext } from '../store/store-context.js'
import type { WriteScope } from '../store/write.js'
import { isActive, type ObservationRow } from './observation-rows.js'

/** What an observer or reflector answer writes. */
export type ObservationWrite = {
  drafts: readonly { text: string; priority: ObservationRow['priority']; observedAt?: number; expiresAt?: number }[]
  /** The last message the new observations cover. */
  throughMessageId: string
  /** Their time when a draft names none. */
  defaultAt: number
} & ({ kind: 'observe' } | { kind: 'reflect'; replaces: readonly string[] })

/** Longest observation text (characters). */
export const MAX_OBSERVATION_TEXT = 4_000

/** The observations table of a store. */
export const observationsTable = (ctx: StoreContext): Table<ObservationRow, string> => ctx.db.table<ObservationRow, string>('observations')

/** Tables an observation write touches (the index's included). */
export function observationTables(ctx: StoreContext): string[] {
  return ['observations', ...ctx.index.tables]
}

/** Every stored observation of a session (tombstones included), in the order they were made. */
export function sessionObservations(ctx: StoreContext, sessionId: string): Promise<ObservationRow[]> {
  return observationsTable(ctx).where('[sessionId+createdAt]').between([sessionId, -Infinity], [sessionId, Infinity]).toArray()
}

/** The observations of a session in force at `now`, oldest first (by what they observe, then by id). */
export async function activeObservations(ctx: StoreContext, sessionId: string, now: number): Promise<ObservationRow[]> {
  return (await sessionObservations(ctx, sessionId))
    .filter((o) => isActive(o, now))
    .sort((a, b) => a.observedAt - b.observedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/** The local `seq` of the last message a session's observations cover (0 when none). */
export async function observedThrough(ctx: StoreContext, sessionId: string): Promise<number> {
  const ids = new Set((await sessionObservations(ctx, sessionId)).filter((o) => o.deletedAt === undefined).map((o) => o.throughMessageId))
  if (ids.size === 0) return 0
  const messages = await ctx.db.messages.bulkGet([...ids])
  return messages.reduce((n, m) => Math.max(n, m?.seq ?? 0), 0)
}

/**
 * Writes an observer's observations, or a reflection that replaces the observations it
 * condensed (they stay, superseded, out of context and search), inside the caller's write,
 * which must include the index's tables (`observationTables`): the new ones are indexed.
 */
export async function writeObservations(
  ctx: StoreContext,
  w: WriteScope,
  projectId: string,
  sessionId: string,
  plan: ObservationWrite,
): Promise<ObservationRow[]> {
  const now = ctx.now()
  const table = observationsTable(ctx)
  let generation = 0
  if (plan.kind === 'reflect') {
    const replaced = (await table.bulkGet([...plan.replaces])).filter((o): o is ObservationRow => o !== undefined)
    for (const o of replaced) {
      generation = Math.max(generation, o.generation + 1)
      await table.put({ ...o, supersededAt: now, hlc: w.hlc(o.hlc) })
      await ctx.index.remove(w, `observation:${o.id}`)
      w.change('observations', 'put', o.id, projectId)
    }
  }
  const rows = plan.drafts.map(
    (d): ObservationRow => ({
      id: newId(now),
      projectId,
      sessionId,
      text: d.text.trim().slice(0, MAX_OBSERVATION_TEXT),
      priority: d.priority,
      observedAt: Number.isSafeInteger(d.observedAt) ? d.observedAt! : plan.defaultAt,
      throughMessageId: plan.throughMessageId,
      generation,
      ...(Number.isSafeInteger(d.expiresAt) ? { expiresAt: d.expiresAt! } : {}),
      createdAt: now,
      hlc: w.hlc(),
    }),
  )
  if (rows.length > 0) await table.bulkAdd(rows)
  await indexDocs(ctx.index, w, rows.map(observationDoc), { fresh: true })
  for (const row of rows) w.change('observations', 'put', row.id, projectId)
  return rows
}

/**
 * Purges observations inside the caller's write (which must include `observationTables`):
 * each live one becomes a text-free tombstone that syncs, and leaves search.
 * @returns how many were purged.
 */
export async function purgeObservations(ctx: StoreContext, w: WriteScope, rows: readonly ObservationRow[], now: number): Promise<number> {
  let n = 0
  for (const o of rows) {
    if (o.deletedAt !== undefined) continue
    const { expiresAt: _gone, ...rest } = o
    await observationsTable(ctx).put({ ...rest, text: '', deletedAt: now, hlc: w.hlc(o.hlc) })
    await ctx.index.remove(w, `observation:${o.id}`)
    w.change('observations', 'delete', o.id, o.projectId)
    n++
  }
  return n
}
