import { invalidInput } from './errors.js'
import { checkSource } from './facts-input.js'
import { factId, storeFactRow, tagKeysOf } from './facts-rows.js'
import { compareHlc } from './hlc.js'
import type { FactRow, Source } from './schema.js'
import type { StoreContext } from './store-context.js'
import { checkId, checkJson, checkNumber, checkOptionalNumber, checkTags, checkTime, type Json } from './validate.js'
import type { WriteScope } from './write.js'

/** A fact state received from another device (what the mirror replicates). */
export interface RemoteFact {
  projectId: string; key: string; value: Json; confidence: number; source?: Source; tags: string[]
  createdAt: number; updatedAt: number; deletedAt?: number; hlc: string
}

/**
 * Applies a fact state from another device, last writer wins by HLC: it is
 * stored only when `remote.hlc` is newer than the stored row's stamp (a purged
 * or never-seen key always takes it). An applied state becomes a new history
 * version with origin 'remote' (validFrom = remote.updatedAt), updates the
 * search index and records a change. The clock always learns `remote.hlc`.
 * Not public API: call it inside `write(ctx, factTables(ctx), fn, { origin: 'remote' })`.
 *
 * @returns true when the remote state was applied.
 * @throws MemoryError `invalid_input` when the remote record is malformed (validated before any write).
 */
export async function applyRemoteFact(ctx: StoreContext, w: WriteScope, remote: RemoteFact): Promise<boolean> {
  const row = checkRemoteFact(remote)
  ctx.clock.receive(row.hlc)
  const stored = await ctx.db.facts.get([row.projectId, row.key])
  if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
  row.version = (stored?.version ?? 0) + 1
  await storeFactRow(ctx, w, row, 'remote')
  return true
}

/** The full stored row of a fact (tombstones included, with its HLC), for the sync mirror. */
export function readFactForSync(ctx: StoreContext, projectId: string, key: string): Promise<FactRow | undefined> {
  ctx.assertOpen()
  return ctx.db.facts.get([projectId, key])
}

function checkRemoteFact(remote: RemoteFact): FactRow {
  if (typeof remote !== 'object' || remote === null) throw invalidInput('remote fact must be an object')
  const projectId = checkId('remote.projectId', remote.projectId)
  const key = checkId('remote.key', remote.key)
  checkJson('remote.value', remote.value)
  const hlc = checkId('remote.hlc', remote.hlc)
  const tags = checkTags(remote.tags)
  const source = checkSource(remote.source)
  const deletedAt = checkOptionalNumber('remote.deletedAt', remote.deletedAt, { min: 0 })
  const row: FactRow = {
    id: factId(projectId, key), projectId, key, value: structuredClone(remote.value),
    confidence: checkNumber('remote.confidence', remote.confidence, { min: 0, max: 1 }),
    tags, tagKeys: tagKeysOf(projectId, tags),
    createdAt: checkTime('remote.createdAt', remote.createdAt), updatedAt: checkTime('remote.updatedAt', remote.updatedAt),
    version: 0, hlc,
  }
  if (source) row.source = source
  if (deletedAt !== undefined) row.deletedAt = deletedAt
  return row
}
