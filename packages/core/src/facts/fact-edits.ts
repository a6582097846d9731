import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import { toFactVersion, valueAt, versionsOf } from './facts-history.js'
import { factTables, purgedTombstone, purgeFactRow, storeFactRow, tagKeysOf, toFact } from './facts-rows.js'
import { type FACT_EDITS, type FactsApi, nextFactRow, softDeleteFact, storedInProject } from './facts.js'
import { requireProject } from '../projects/projects.js'
import type { FactRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkPageOptions, decodeCursor, encodeCursor, pageFrom } from '../store/paging.js'
import { checkId, checkOptions, checkTime } from '../store/validate.js'
import { read, write } from '../store/write.js'

/**
 * The facts methods that load on their first call (facts.ts keeps set, get, list and delete in
 * the start path): deleting many, restoring, the deleted list, purging, history and time travel.
 */
export function createFactEdits(ctx: StoreContext): Pick<FactsApi, (typeof FACT_EDITS)[number]> {
  const { db } = ctx
  const tables = (): string[] => factTables(ctx)
  return {
    async deleteAll(projectId, options) {
      checkId('projectId', projectId)
      const { tag } = checkOptions('options', options, ['tag'])
      if (tag !== undefined) checkId('tag', tag)
      return write(ctx, tables(), async (w) => {
        await requireProject(ctx, projectId)
        const candidates =
          tag !== undefined
            ? await db.facts
                .where('tagKeys')
                .equals(tagKeysOf(projectId, [tag])[0]!)
                .toArray()
            : await db.facts.where('[projectId+key]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray()
        const active = candidates.filter((r) => r.deletedAt === undefined && r.projectId === projectId)
        const now = ctx.now()
        for (const row of active) await softDeleteFact(ctx, w, row, now)
        return active.length
      })
    },

    async restore(projectId, key) {
      checkId('projectId', projectId)
      checkId('key', key)
      return write(ctx, tables(), async (w) => {
        const stored = await storedInProject(ctx, projectId, key)
        if (!stored || stored.deletedAt === undefined || stored.purged) return undefined
        const row = nextFactRow(ctx, stored, stored, w.hlc(stored.hlc))
        await storeFactRow(ctx, w, row, 'local')
        return toFact(row)
      })
    },

    async deleted(projectId, options) {
      checkId('projectId', projectId)
      const { after, limit } = checkPageOptions(options, [])
      const cursor = after === undefined ? undefined : decodeCursor(after)
      const rows = await read(ctx, ['facts'], () => db.facts.where('[projectId+deletedAt]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray())
      // Newest deletion first, ties by key; purged tombstones are no deleted facts any more.
      const sorted = rows
        .filter((r) => !r.purged)
        .sort((a, b) => b.deletedAt! - a.deletedAt! || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .filter((r) => cursor === undefined || r.deletedAt! < cursor.at || (r.deletedAt === cursor.at && r.key > cursor.id))
      return pageFrom(sorted.slice(0, limit + 1).map(toFact), limit, (f) => encodeCursor(f.deletedAt!, f.key))
    },

    async purge(projectId, key) {
      checkId('projectId', projectId)
      if (key !== undefined) checkId('key', key)
      return write(ctx, tables(), async (w) => {
        await requireProject(ctx, projectId)
        const found =
          key !== undefined
            ? [await db.facts.get([projectId, key])].filter((r): r is FactRow => r !== undefined)
            : await db.facts.where('[projectId+deletedAt]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray()
        const rows = found.filter((r) => !r.purged)
        // In a synced project the purge must reach the other devices: a tombstone without content stays.
        const tombstone = ctx.syncedProjects.has(projectId)
        for (const row of rows) await purgeFactRow(ctx, w, row, tombstone ? purgedTombstone(row, ctx.now(), w.hlc(row.hlc)) : undefined)
        return rows.length
      })
    },

    async history(projectId, key) {
      checkId('projectId', projectId)
      checkId('key', key)
      const rows = await read(ctx, ['factVersions'], () => versionsOf(ctx, projectId, key))
      return rows.map(toFactVersion)
    },

    async at(projectId, key, time) {
      checkId('projectId', projectId)
      checkId('key', key)
      checkTime('time', time)
      const rows = await read(ctx, ['factVersions'], () => versionsOf(ctx, projectId, key))
      return valueAt(rows, time)
    },
  }
}
