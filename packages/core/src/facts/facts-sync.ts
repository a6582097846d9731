import { invalidInput } from '../store/errors.js'
import { maxKey } from '../store/keys.js'
import { checkSource } from './facts-input.js'
import { factId, purgeFactRow, storeFactRow, tagKeysOf } from './facts-rows.js'
import { compareHlc } from '../store/hlc.js'
import type { FactRow } from '../store/rows.js'
import { checkEnvelope, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkJson, checkNumber, checkTags, checkTime, type Json } from '../store/validate.js'

const FIELDS = ['projectId', 'key', 'value', 'confidence', 'source', 'tags', 'createdAt', 'updatedAt', 'deletedAt', 'expiresAt', 'hlc', 'purged'] as const

/**
 * Facts as sync mirrors them: one record per (project, key), id
 * `factId(projectId, key)`, so the same key written on two devices converges.
 * An applied remote state becomes a new history version with origin 'remote'
 * (validFrom = its updatedAt) and updates the search index. A purge travels as
 * a content-free tombstone (`purged: true`): applied, it removes the fact's
 * history and index entry on this device too.
 */
export const syncedFacts: SyncedKind<FactRow> = {
  kind: 'facts',
  tables: ['facts', 'factVersions'],
  async read(ctx, projectId, id) {
    const key = keyOfFactId(projectId, id)
    return key === undefined ? undefined : ctx.db.facts.get([projectId, key])
  },
  readProject: (ctx, projectId) => ctx.db.facts.where('[projectId+key]').between([projectId, ''], [projectId, maxKey()]).toArray(),
  toRecord: (row) => ({
    kind: 'facts',
    projectId: row.projectId,
    id: factId(row.projectId, row.key),
    hlc: row.hlc,
    row: travelling(row, ['id', 'tagKeys', 'version']),
  }),
  check(record) {
    const r = checkEnvelope(record, 'facts', FIELDS)
    const projectId = record.projectId
    const key = checkId('remote.key', r.key)
    if (factId(projectId, key) !== record.id)
      throw invalidInput(`A fact record's id ${JSON.stringify(record.id)} does not match its key ${JSON.stringify(key)}`)
    checkJson('remote.value', r.value)
    const tags = checkTags(r.tags)
    const source = checkSource(r.source)
    const row: FactRow = {
      id: record.id,
      projectId,
      key,
      value: structuredClone(r.value) as Json,
      confidence: checkNumber('remote.confidence', r.confidence, { min: 0, max: 1 }),
      tags,
      tagKeys: tagKeysOf(projectId, tags),
      createdAt: checkTime('remote.createdAt', r.createdAt),
      updatedAt: checkTime('remote.updatedAt', r.updatedAt),
      version: 0,
      hlc: record.hlc,
    }
    if (source) row.source = source
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('remote.deletedAt', r.deletedAt)
    if (r.expiresAt !== undefined) row.expiresAt = checkTime('remote.expiresAt', r.expiresAt)
    if (r.purged !== undefined) {
      if (r.purged !== true || row.value !== null || row.deletedAt === undefined || tags.length > 0 || source) {
        throw invalidInput('A purged fact record carries no content: purged true, value null, no tags or source, deletedAt set')
      }
      row.purged = true
    }
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await ctx.db.facts.get([row.projectId, row.key])
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    const next = { ...row, version: (stored?.version ?? 0) + 1 }
    if (row.purged) await purgeFactRow(ctx, w, stored ?? next, next)
    else await storeFactRow(ctx, w, next, 'remote')
    return true
  },
}

/** The key of a fact id made by `factId(projectId, key)`. */
function keyOfFactId(projectId: string, id: string): string | undefined {
  const prefix = `${encodeURIComponent(projectId)}/`
  return id.startsWith(prefix) ? decodeURIComponent(id.slice(prefix.length)) : undefined
}
