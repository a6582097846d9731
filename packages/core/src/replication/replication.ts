import { Dexie } from 'dexie'
import { MemoryError } from '../store/errors.js'
import { maxKey } from '../store/keys.js'
import { checkHlc, compareHlc, isHlc, type StampVerdict } from '../store/hlc.js'
import { type ClockReading, type LearnClockOptions, learnClock, restampPending } from './clock-correction.js'
import type { StoreContext } from '../store/store-context.js'
import type { SyncEngine } from './sync-api.js'
import { CONVERSATION_KINDS, MIRRORED_KINDS, type MirroredKind } from '../catalog/lists.js'
import type { MirroredRecord } from '../store/synced-kind.js'
import type { SyncedKinds } from './synced-kinds.js'
import { checkId, checkLimit, checkOptions } from '../store/validate.js'
import { read, write, type WriteScope } from '../store/write.js'

export type { MirroredKind } from '../catalog/lists.js'
export type { MirroredRecord } from '../store/synced-kind.js'

/** An outbox entry with the current state of the record it points at. */
export interface PendingReplication {
  seq: number
  kind: MirroredKind
  projectId: string
  id: string
  op: 'put' | 'delete'
  hlc: string
  /** The record as stored now (a purged fact of a synced project is a content-free tombstone); undefined when the row is gone. */
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
   * Records whose stamp is malformed: not stored on any device (the same rule everywhere), and
   * the clock did not move for them. A well-formed stamp is never set aside, however far ahead:
   * the verdict is always 'malformed' (the type keeps 'ahead' for earlier callers).
   */
  quarantined: Array<{ record: MirroredRecord; verdict: Exclude<StampVerdict, 'accepted'> }>
}

/** Options of {@link ReplicationApi.applyRemote}. */
export interface ApplyRemoteOptions {
  /**
   * How far a record's stamp may lead this device's clock for the clock to follow it (default:
   * 5 minutes). A record further ahead is applied all the same; only the clock stays.
   */
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
   * Outbox entries, oldest first, with their records' current state; with `doc`, only those
   * of one document of the project ('' the project document, a session id that session's).
   * @throws MemoryError `invalid_input` on a bad limit, project id or doc, `closed`.
   */
  pending(options?: { projectId?: string; doc?: string; limit?: number }): Promise<PendingReplication[]>
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
   * publishing the records loses nothing. With `doc`, one document's: '' the
   * project document (its sessions too when conversations sync), a session id
   * that session's messages.
   * @throws MemoryError `invalid_input`, `closed`.
   */
  snapshot(projectId: string, options?: { doc?: string }): Promise<{ records: MirroredRecord[]; outbox: number[] }>
  /** True when the project's sessions and messages sync (`projects.setSync(id, { messages: true })`). */
  syncsConversations(projectId: string): boolean
  /** The session documents of a project with outbox entries waiting (ids, oldest first by id). @throws MemoryError `invalid_input`, `closed`. */
  pendingSessions(projectId: string): Promise<string[]>
  /** The ids of a project's `limit` most recently active sessions (purged ones left out). @throws MemoryError `invalid_input`, `closed`. */
  recentSessions(projectId: string, limit: number): Promise<string[]>
  /** Advances this device's clock past a stamp seen from another device (if well-formed and within `maxClockLeadMs`). */
  receiveClock(hlc: string, maxClockLeadMs?: number): StampVerdict
  /**
   * Judges a stamp against this device's clock (corrected by the relay's offset) without moving
   * the clock: 'malformed', 'ahead' (more than `maxClockLeadMs` ahead: a suspicious stamp, to be
   * listed, never set aside) or 'accepted'.
   */
  checkStamp(hlc: unknown, maxClockLeadMs?: number): StampVerdict
  /**
   * Takes the relay's time (epoch ms, as of now) as this device's reference: the offset is kept
   * across restarts and the clock stamps with corrected time; a correction makes the drain stamp
   * waiting outbox entries again ({@link ReplicationApi.restamp}). A `clock` warning shows in
   * `memory.status` while the offset exceeds `maxLeadMs`.
   * @throws MemoryError `invalid_input` on a bad time or bound, `closed`.
   */
  learnClock(relayTime: number, options?: LearnClockOptions): Promise<ClockReading>
  /** The offset in use (relay minus this device's clock, ms), or undefined before it was ever learned. */
  clockOffset(): number | undefined
  /**
   * Outbox entries as `pending` gave them, those written before a clock correction stamped again
   * (moved by the correction, in their order, each after `heldStamp(kind, id)`): publish what it returns.
   * @throws MemoryError `closed`, `quota_exceeded`.
   */
  restamp(entries: readonly PendingReplication[], heldStamp?: (kind: MirroredKind, id: string) => string | undefined): Promise<PendingReplication[]>
  /**
   * Attaches a running sync engine: `memory.sync` and `memory.status` report through it.
   * @returns the detach function. @throws MemoryError `conflict` when one is attached already.
   */
  attachSync(engine: SyncEngine): () => void
}

/** Creates the replication seam of a store (`replicationOf(memory)`). */
export function createReplication(ctx: StoreContext, descriptors: SyncedKinds): ReplicationApi {
  const { db } = ctx
  const allKinds = [...MIRRORED_KINDS, ...CONVERSATION_KINDS]
  const readTables = ['outbox', ...allKinds]
  const applyTables = () => [...new Set(['projects', ...allKinds.flatMap((k) => descriptors[k].tables), ...ctx.index.tables])]

  async function current(entry: { kind: MirroredKind; projectId: string; id: string }): Promise<MirroredRecord | undefined> {
    const kind = descriptors[entry.kind]
    const row = await kind.read(ctx, entry.projectId, entry.id)
    return row && kind.toRecord(row)
  }

  return {
    deviceId: ctx.clock.deviceId,
    async pending(options) {
      checkOptions('options', options, ['projectId', 'doc', 'limit'])
      options ??= {}
      const limit = checkLimit('limit', options.limit, 500)
      const projectId = options.projectId === undefined ? undefined : checkId('projectId', options.projectId)
      const doc = options.doc === undefined ? undefined : checkDoc(options.doc)
      if (doc !== undefined && projectId === undefined) throw new MemoryError('invalid_input', 'pending({ doc }) needs the projectId too')
      return read(ctx, readTables, async () => {
        const rows =
          projectId === undefined
            ? await db.outbox.orderBy('seq').limit(limit).toArray()
            : doc === undefined
              ? await db.outbox.where('projectId').equals(projectId).limit(limit).toArray()
              : await db.outbox.where('[projectId+doc]').equals([projectId, doc]).limit(limit).toArray()
        const out: PendingReplication[] = []
        for (const row of rows)
          out.push({ seq: row.seq!, kind: row.kind, projectId: row.projectId, id: row.id, op: row.op, hlc: row.hlc, record: await current(row) })
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
        // Only the stamp's form decides, never this device's clock: every device takes the same records.
        if (!isHlc(record?.hlc)) {
          result.quarantined.push({ record, verdict: 'malformed' })
          continue
        }
        ctx.clock.receive(record.hlc, options?.maxClockLeadMs) // follows it only within the bound
        admitted.push(record)
      }
      if (admitted.length === 0) return result
      await write(
        ctx,
        applyTables(),
        async (w) => {
          for (const record of admitted) {
            let applied: boolean
            try {
              applied = await applyOne(ctx, descriptors, w, record)
            } catch (error) {
              if (error instanceof MemoryError && (error.code === 'invalid_input' || error.code === 'limit_exceeded')) {
                result.rejected.push(record)
                continue
              }
              throw error
            }
            if (applied) {
              result.applied++
              continue
            }
            const local = await current(record)
            if (local && compareHlc(local.hlc, record.hlc) > 0) result.newer.push(local)
          }
        },
        { origin: 'remote' },
      )
      return result
    },
    async snapshot(projectId, options) {
      checkId('projectId', projectId)
      const { doc: given } = checkOptions('options', options, ['doc'])
      const doc = given === undefined ? undefined : checkDoc(given)
      const conversations = ctx.conversationProjects.has(projectId)
      return read(ctx, readTables, async () => {
        if (doc !== undefined && doc !== '') {
          const [outbox, messages] = await Promise.all([
            db.outbox.where('[projectId+doc]').equals([projectId, doc]).primaryKeys(),
            conversations ? descriptors.messages.readDoc!(ctx, projectId, doc) : [],
          ])
          return { records: messages.map(descriptors.messages.toRecord), outbox: outbox as number[] }
        }
        const kinds: MirroredKind[] = conversations ? [...MIRRORED_KINDS, 'sessions'] : [...MIRRORED_KINDS]
        const [outbox, ...perKind] = await Promise.all([
          doc === undefined
            ? db.outbox.where('projectId').equals(projectId).primaryKeys()
            : db.outbox.where('[projectId+doc]').equals([projectId, '']).primaryKeys(),
          ...kinds.map(async (k) => (await descriptors[k].readProject(ctx, projectId)).map(descriptors[k].toRecord)),
        ])
        return { records: perKind.flat() as MirroredRecord[], outbox: outbox as number[] }
      })
    },
    syncsConversations: (projectId) => ctx.conversationProjects.has(projectId),
    async pendingSessions(projectId) {
      checkId('projectId', projectId)
      const keys = await read(ctx, ['outbox'], () =>
        db.outbox.where('[projectId+doc]').between([projectId, ''], [projectId, maxKey()], false, true).uniqueKeys(),
      )
      return keys.map((k) => (k as unknown as [string, string])[1])
    },
    async recentSessions(projectId, limit) {
      checkId('projectId', projectId)
      const n = checkLimit('limit', limit, 10)
      const rows = await read(ctx, ['sessions'], () =>
        db.sessions
          .where('[projectId+lastActiveAt]')
          .between([projectId, Dexie.minKey], [projectId, maxKey()])
          .reverse()
          .filter((s) => !s.purged)
          .limit(n)
          .primaryKeys(),
      )
      return rows
    },
    receiveClock(hlc, maxClockLeadMs) {
      return ctx.clock.receive(hlc, maxClockLeadMs)
    },
    checkStamp(hlc, maxClockLeadMs) {
      return checkHlc(hlc, ctx.clock.now(), maxClockLeadMs)
    },
    learnClock: (relayTime, options) => learnClock(ctx, relayTime, options),
    clockOffset: () => (ctx.clockOffset.learnedAt === undefined ? undefined : ctx.clockOffset.ms),
    restamp: (entries, heldStamp) => restampPending(ctx, entries, heldStamp),
    attachSync: (engine) => ctx.sync.attach(engine),
  }
}

/**
 * Checks a remote record exactly like a local write (its kind's descriptor) and
 * applies it — only into a project of this store whose sync is on.
 * @throws MemoryError `invalid_input` / `limit_exceeded` for a record that must not be stored.
 */
async function applyOne(ctx: StoreContext, descriptors: SyncedKinds, w: WriteScope, record: MirroredRecord): Promise<boolean> {
  const kind = typeof record === 'object' && record !== null ? descriptors[record.kind] : undefined
  if (kind === undefined || !Object.hasOwn(descriptors, record.kind))
    throw new MemoryError('invalid_input', `Unknown mirrored kind ${JSON.stringify((record as { kind?: unknown } | null)?.kind)}`)
  const row = kind.check(record)
  if (!ctx.syncedProjects.has(record.projectId)) {
    throw new MemoryError(
      'invalid_input',
      `Project ${JSON.stringify(record.projectId)} is not synced on this device; its records are not taken from other devices`,
    )
  }
  if ((CONVERSATION_KINDS as readonly string[]).includes(record.kind) && !ctx.conversationProjects.has(record.projectId)) {
    throw new MemoryError(
      'invalid_input',
      `The conversations of project ${JSON.stringify(record.projectId)} do not sync on this device (projects.setSync(id, { messages: true })); its ${record.kind} are not taken from other devices`,
    )
  }
  return kind.apply(ctx, w, row)
}

/** Checks a document name of a project: '' (the project document) or a session id. @throws MemoryError `invalid_input`. */
function checkDoc(doc: unknown): string {
  return doc === '' ? '' : checkId('doc', doc)
}
