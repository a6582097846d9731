import { applyRemoteBlock, readBlockForSync } from './blocks.js'
import { MemoryError } from './errors.js'
import { factId } from './facts-rows.js'
import { applyRemoteFact, readFactForSync, type RemoteFact } from './facts-sync.js'
import { checkHlc, compareHlc, type StampVerdict } from './hlc.js'
import type { BlockRow, FactRow, OutboxRow, SummaryRow } from './schema.js'
import type { StoreContext } from './store-context.js'
import { applyRemoteSummary, readSummaryForSync } from './summaries.js'
import { checkId, checkLimit, checkOptions, type Json } from './validate.js'
import { read, write, type WriteScope } from './write.js'

/** The memory kinds that sync mirrors between devices. */
export type MirroredKind = 'facts' | 'blocks' | 'summaries'

/**
 * One mirrored record as it travels between devices: the stored row without
 * device-local fields (index keys, local version numbers), with its HLC stamp.
 * Tombstones are records too (`row.deletedAt` set).
 */
export interface MirroredRecord {
  kind: MirroredKind
  projectId: string
  /** Stable across devices: a fact's `factId(projectId, key)`, a block's label, a summary's id. */
  id: string
  /** Hybrid-logical-clock stamp of the write that made this state (`row.hlc`). */
  hlc: string
  row: { [field: string]: Json }
}

/** An outbox entry with the current state of the record it points at. */
export interface PendingReplication {
  seq: number
  kind: MirroredKind
  projectId: string
  id: string
  op: 'put' | 'delete'
  hlc: string
  /** The record as stored now; undefined when it was purged (purges stay local). */
  record: MirroredRecord | undefined
}

/** What {@link ReplicationApi.applyRemote} did with a batch. */
export interface ApplyResult {
  /** Records stored (newer than the local copy). */
  applied: number
  /** Local records that beat the incoming ones on HLC: the mirror must publish them again. */
  newer: MirroredRecord[]
  /** Malformed records, skipped (the rest of the batch still applies). */
  rejected: MirroredRecord[]
  /**
   * Records whose stamp is malformed or leads this device's clock by more than
   * `maxClockLeadMs`: not stored, and the clock did not move for them.
   */
  quarantined: Array<{ record: MirroredRecord; verdict: Exclude<StampVerdict, 'accepted'> }>
}

/** Options of {@link ReplicationApi.applyRemote}. */
export interface ApplyRemoteOptions {
  /** How far a record's stamp may lead this device's wall clock (default: 5 minutes). */
  maxClockLeadMs?: number
}

/**
 * Core's replication seam for `@engram/sync` (core stays free of Yjs): read the
 * outbox, acknowledge it, apply remote records last-writer-wins by HLC, and
 * snapshot a project's mirrored set. Not meant for apps.
 */
export interface ReplicationApi {
  /** This store's device id (the HLC tie-breaker). */
  readonly deviceId: string
  /**
   * Outbox entries, oldest first, with their records' current state.
   * @throws MemoryError `invalid_input` on a bad limit or project id, `closed`.
   */
  pending(options?: { projectId?: string; limit?: number }): Promise<PendingReplication[]>
  /** Removes delivered outbox entries. @throws MemoryError `invalid_input`, `closed`. */
  ack(seqs: readonly number[]): Promise<void>
  /**
   * Applies remote records in one transaction with origin 'remote' (no outbox
   * rows, changes emitted as 'remote'): each is stored only when its HLC is newer.
   * @throws MemoryError `invalid_input` when `batch` is not an array, `closed`, `quota_exceeded`
   * (storage failures roll the batch back).
   */
  applyRemote(batch: readonly MirroredRecord[], options?: ApplyRemoteOptions): Promise<ApplyResult>
  /**
   * Every mirrored record of a project (tombstones included) and the outbox
   * entries of that project, read in one snapshot: acking those entries after
   * publishing the records loses nothing.
   * @throws MemoryError `invalid_input`, `closed`.
   */
  snapshot(projectId: string): Promise<{ records: MirroredRecord[]; outbox: number[] }>
  /** Advances this device's clock past a stamp seen from another device (if well-formed and within `maxClockLeadMs`). */
  receiveClock(hlc: string, maxClockLeadMs?: number): StampVerdict
  /** Judges a stamp against this device's wall clock without moving the clock ('malformed', 'ahead' or 'accepted'). */
  checkStamp(hlc: unknown, maxClockLeadMs?: number): StampVerdict
}

/** Creates the replication namespace of a store (`memory.replication`). */
export function createReplication(ctx: StoreContext): ReplicationApi {
  const { db } = ctx
  const readTables = ['outbox', 'facts', 'blocks', 'summaries']
  const applyTables = () => [...new Set(['projects', 'facts', 'factVersions', 'blocks', 'summaries', ...ctx.index.tables])]

  async function current(entry: OutboxRow): Promise<MirroredRecord | undefined> {
    if (entry.kind === 'facts') {
      const key = keyOfFactId(entry.projectId, entry.id)
      const row = key === undefined ? undefined : await readFactForSync(ctx, entry.projectId, key)
      return row && fromFact(row)
    }
    if (entry.kind === 'blocks') {
      const row = await readBlockForSync(ctx, entry.projectId, labelOfBlockId(entry.projectId, entry.id))
      return row && fromBlock(row)
    }
    const row = await readSummaryForSync(ctx, entry.id)
    return row && fromSummary(row)
  }

  async function localOf(record: MirroredRecord): Promise<MirroredRecord | undefined> {
    if (record.kind === 'facts') {
      const row = await db.facts.get([record.projectId, String(record.row.key)])
      return row && fromFact(row)
    }
    if (record.kind === 'blocks') {
      const row = await db.blocks.get([record.projectId, String(record.row.label)])
      return row && fromBlock(row)
    }
    const row = await db.summaries.get(record.id)
    return row && fromSummary(row)
  }

  return {
    deviceId: ctx.clock.deviceId,
    async pending(options) {
      checkOptions('options', options, ['projectId', 'limit'])
      options ??= {}
      const limit = checkLimit('limit', options.limit, 500)
      const projectId = options.projectId === undefined ? undefined : checkId('projectId', options.projectId)
      return read(ctx, readTables, async () => {
        const rows = projectId === undefined
          ? await db.outbox.orderBy('seq').limit(limit).toArray()
          : await db.outbox.where('projectId').equals(projectId).limit(limit).toArray()
        const out: PendingReplication[] = []
        for (const row of rows) out.push({ seq: row.seq!, kind: row.kind, projectId: row.projectId, id: row.id, op: row.op, hlc: row.hlc, record: await current(row) })
        return out
      })
    },
    async ack(seqs) {
      if (!Array.isArray(seqs) || !seqs.every((s) => Number.isInteger(s))) throw new MemoryError('invalid_input', 'ack needs an array of outbox seq numbers')
      if (seqs.length === 0) return
      await write(ctx, ['outbox'], () => db.outbox.bulkDelete([...seqs]))
    },
    async applyRemote(batch, options) {
      if (!Array.isArray(batch)) throw new MemoryError('invalid_input', 'applyRemote needs an array of mirrored records')
      const result: ApplyResult = { applied: 0, newer: [], rejected: [], quarantined: [] }
      if (batch.length === 0) return result
      ctx.assertOpen()
      const admitted: MirroredRecord[] = []
      for (const record of batch) {
        const verdict = ctx.clock.receive(record?.hlc, options?.maxClockLeadMs)
        if (verdict === 'accepted') admitted.push(record)
        else result.quarantined.push({ record, verdict })
      }
      if (admitted.length === 0) return result
      await write(ctx, applyTables(), async (w) => {
        for (const record of admitted) {
          let applied: boolean
          try {
            applied = await applyOne(ctx, w, record)
          } catch (error) {
            if (error instanceof MemoryError && error.code === 'invalid_input') {
              result.rejected.push(record)
              continue
            }
            throw error
          }
          if (applied) {
            result.applied++
            continue
          }
          const local = await localOf(record)
          if (local && compareHlc(local.hlc, record.hlc) > 0) result.newer.push(local)
        }
      }, { origin: 'remote' })
      return result
    },
    async snapshot(projectId) {
      checkId('projectId', projectId)
      return read(ctx, readTables, async () => {
        const [facts, blocks, summaries, outbox] = await Promise.all([
          db.facts.where('[projectId+key]').between([projectId, ''], [projectId, '\uffff']).toArray(),
          db.blocks.where('projectId').equals(projectId).toArray(),
          db.summaries.where('[projectId+createdAt]').between([projectId, -Infinity], [projectId, Infinity]).toArray(),
          db.outbox.where('projectId').equals(projectId).primaryKeys(),
        ])
        return { records: [...facts.map(fromFact), ...blocks.map(fromBlock), ...summaries.map(fromSummary)], outbox }
      })
    },
    receiveClock(hlc, maxClockLeadMs) {
      return ctx.clock.receive(hlc, maxClockLeadMs)
    },
    checkStamp(hlc, maxClockLeadMs) {
      return checkHlc(hlc, ctx.now(), maxClockLeadMs)
    },
  }
}

async function applyOne(ctx: StoreContext, w: WriteScope, record: MirroredRecord): Promise<boolean> {
  if (typeof record !== 'object' || record === null || typeof record.row !== 'object' || record.row === null) {
    throw new MemoryError('invalid_input', 'A mirrored record needs { kind, projectId, id, hlc, row }')
  }
  const row = { ...record.row, projectId: record.projectId, hlc: record.hlc }
  if (record.kind === 'facts') return applyRemoteFact(ctx, w, row as unknown as RemoteFact)
  if (record.kind === 'blocks') return applyRemoteBlock(ctx, w, row as unknown as BlockRow)
  if (record.kind === 'summaries') return applyRemoteSummary(ctx, w, { ...row, id: record.id } as unknown as SummaryRow)
  throw new MemoryError('invalid_input', `Unknown mirrored kind ${JSON.stringify(record.kind)}`)
}

/** The key of a fact id made by `factId(projectId, key)`. */
function keyOfFactId(projectId: string, id: string): string | undefined {
  const prefix = `${encodeURIComponent(projectId)}/`
  return id.startsWith(prefix) ? decodeURIComponent(id.slice(prefix.length)) : undefined
}

/** Block changes carry `blockId(projectId, label)` (older callers: the bare label) as their id. */
function labelOfBlockId(projectId: string, id: string): string {
  const prefix = `${encodeURIComponent(projectId)}/`
  return id.startsWith(prefix) ? decodeURIComponent(id.slice(prefix.length)) : id
}

function plain(row: object, drop: readonly string[]): { [field: string]: Json } {
  const out: { [field: string]: Json } = {}
  for (const [k, v] of Object.entries(row)) if (v !== undefined && !drop.includes(k)) out[k] = v as Json
  return out
}

function fromFact(row: FactRow): MirroredRecord {
  return { kind: 'facts', projectId: row.projectId, id: factId(row.projectId, row.key), hlc: row.hlc, row: plain(row, ['id', 'tagKeys', 'version']) }
}
function fromBlock(row: BlockRow): MirroredRecord {
  return { kind: 'blocks', projectId: row.projectId, id: row.label, hlc: row.hlc, row: plain(row, []) }
}
function fromSummary(row: SummaryRow): MirroredRecord {
  return { kind: 'summaries', projectId: row.projectId, id: row.id, hlc: row.hlc, row: plain(row, []) }
}
