import { blockId, MAX_BLOCK_DESCRIPTION, MAX_BLOCK_LIMIT } from './block-rules.js'
import { MemoryError } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import type { BlockRow } from '../store/rows.js'
import { checkEnvelope, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkNumber, checkOptionalString, checkString, checkTime } from '../store/validate.js'
import { invalidInput } from '../store/errors.js'

const FIELDS = ['projectId', 'label', 'value', 'limit', 'description', 'readOnly', 'updatedAt', 'hlc', 'deletedAt'] as const

/** Core blocks as sync mirrors them: keyed by label within the project's document. */
export const syncedBlocks: SyncedKind<BlockRow> = {
  kind: 'blocks',
  tables: ['blocks'],
  read: (ctx, projectId, id) => ctx.db.blocks.get([projectId, labelOfBlockId(projectId, id)]),
  readProject: (ctx, projectId) => ctx.db.blocks.where('projectId').equals(projectId).toArray(),
  toRecord: (row) => ({ kind: 'blocks', projectId: row.projectId, id: row.label, hlc: row.hlc, row: travelling(row) }),
  check(record) {
    const r = checkEnvelope(record, 'blocks', FIELDS)
    const label = checkId('remote.label', r.label)
    if (label !== record.id) throw invalidInput(`A block record's id ${JSON.stringify(record.id)} is not its label ${JSON.stringify(label)}`)
    if (typeof r.readOnly !== 'boolean') throw invalidInput('remote.readOnly must be a boolean')
    const row: BlockRow = {
      projectId: record.projectId,
      label,
      value: checkString('remote.value', r.value),
      limit: checkNumber('remote.limit', r.limit, { min: 1, max: MAX_BLOCK_LIMIT, integer: true }),
      readOnly: r.readOnly,
      updatedAt: checkTime('remote.updatedAt', r.updatedAt),
      hlc: record.hlc,
    }
    // The limit a local write enforces holds for every device's writes.
    if (row.value.length > row.limit)
      throw new MemoryError('limit_exceeded', `Block ${JSON.stringify(label)} holds ${row.value.length} characters, more than its limit of ${row.limit}`)
    const description = checkOptionalString('remote.description', r.description, MAX_BLOCK_DESCRIPTION)
    if (description !== undefined && description !== '') row.description = description
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('remote.deletedAt', r.deletedAt)
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const stored = await ctx.db.blocks.get([row.projectId, row.label])
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    await ctx.db.blocks.put(row)
    w.change('blocks', row.deletedAt === undefined ? 'put' : 'delete', blockId(row.projectId, row.label), row.projectId)
    return true
  },
}

/** Block changes carry `blockId(projectId, label)` (mirrored records: the bare label) as their id. */
function labelOfBlockId(projectId: string, id: string): string {
  const prefix = `${encodeURIComponent(projectId)}/`
  return id.startsWith(prefix) ? decodeURIComponent(id.slice(prefix.length)) : id
}
