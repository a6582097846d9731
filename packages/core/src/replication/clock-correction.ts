import { CLOCK_OFFSET_META_KEY, type ClockOffset, clockWarningOf, shiftOf } from '../store/clock-offset.js'
import { compareHlc, formatHlc, readHlc, successorHlc } from '../store/hlc.js'
import type { OutboxRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkNumber } from '../store/validate.js'
import { write } from '../store/write.js'
import { highestStoredStamp } from './clock-restore.js'
import type { MirroredKind } from '../catalog/lists.js'
import type { MirroredRecord } from '../store/synced-kind.js'
import { loadSyncedKinds, type SyncedKinds } from './synced-kinds.js'

/**
 * The offset's hysteresis: a reading of the relay's time moves the stored offset only when it
 * differs from it by at least this much (1 s). A reading carries the network's delay and its
 * jitter (tens to hundreds of ms); were each reading taken as it is, two devices whose clocks
 * agree would stamp their edits by noise and reorder them. A real clock error or jump of a
 * second or more is learned at the next reading.
 */
export const MIN_OFFSET_CHANGE_MS = 1_000

/** Options of `learnClock`. */
export interface LearnClockOptions {
  /** Sync's clock-lead bound: an offset beyond it shows a `clock` warning in `memory.status`. Default: the last one given (5 minutes). */
  maxLeadMs?: number
}

/** What `learnClock` made of a reading of the relay's time. */
export interface ClockReading {
  /** The offset now in use: relay time minus this device's wall clock, ms (positive: this clock is slow). */
  offsetMs: number
  /** How far the offset moved with this reading (0 when it was within {@link MIN_OFFSET_CHANGE_MS} of the offset in use). */
  movedMs: number
}

/** An outbox entry as the restamp reads and returns it (the shape of `PendingReplication`). */
export interface StampedEntry {
  seq: number
  kind: MirroredKind
  projectId: string
  id: string
  op: 'put' | 'delete'
  hlc: string
  record: MirroredRecord | undefined
}

/** Every table a stamped write touches, so no write interleaves with a correction of the clock. */
function stampedTables(descriptors: SyncedKinds): string[] {
  const kinds = Object.values(descriptors).flatMap((k) => k.tables)
  return [...new Set(['outbox', 'meta', 'sessions', 'messages', ...kinds])]
}

/** The stamp a stored row of a kind carries (a message's is its order key's until it is edited). */
function stampOfRow(kind: MirroredKind, row: { hlc?: string; at?: string }): string | undefined {
  return kind === 'messages' && row.hlc === undefined ? row.at?.split(' ')[0] : row.hlc
}

const persist = (ctx: StoreContext, offset: ClockOffset) => ctx.db.meta.put({ key: CLOCK_OFFSET_META_KEY, value: { ...offset } as never })

function showWarning(ctx: StoreContext): void {
  const message = clockWarningOf(ctx.clockOffset)
  ctx.status.warn('clock', message === undefined ? undefined : { message, offsetMs: ctx.clockOffset.ms })
}

/**
 * Takes the relay's time (epoch ms, as of this moment) as the reference of this
 * device's clock. The offset (relay minus wall clock) is kept in `meta` and the
 * hybrid clock runs on wall clock + offset from now on. The offset moves only when
 * the reading differs from it by {@link MIN_OFFSET_CHANGE_MS} (1 s) or more: network
 * jitter never moves it, a clock error or jump of seconds is learned. When it moved:
 * - outbox entries written so far were stamped with the old offset: a correction
 *   is recorded and the drain shifts their stamps before it publishes them
 *   ({@link restampPending});
 * - the clock restarts from the stamps stored within `maxLeadMs` of the corrected
 *   time, leaving out those entries' stamps: a clock that was fast stops issuing
 *   stamps ahead of real time at once.
 * A `clock` warning shows in `memory.status` while the offset exceeds `maxLeadMs`.
 * @throws MemoryError `invalid_input` for a relay time that is not a time, `closed`.
 */
export async function learnClock(ctx: StoreContext, relayTime: number, options: LearnClockOptions = {}): Promise<ClockReading> {
  checkNumber('relayTime', relayTime, { min: 0 })
  const descriptors = await loadSyncedKinds()
  const offset = ctx.clockOffset
  const boundMs = options.maxLeadMs === undefined ? offset.boundMs : checkNumber('maxLeadMs', options.maxLeadMs, { min: 0 })
  // Hysteresis: a reading within MIN_OFFSET_CHANGE_MS of the offset in use (0 before the first) is
  // the network's delay and jitter, not the clock's error; the offset stays, so no edit is reordered by it.
  const measured = Math.round(relayTime - ctx.now())
  const first = offset.learnedAt === undefined
  if (!first && Math.abs(measured - offset.ms) < MIN_OFFSET_CHANGE_MS) {
    if (boundMs !== offset.boundMs) {
      offset.boundMs = boundMs
      await write(ctx, ['meta'], () => persist(ctx, offset))
      showWarning(ctx)
    }
    return { offsetMs: offset.ms, movedMs: 0 }
  }
  let movedBy = 0
  await write(ctx, stampedTables(descriptors), async () => {
    // A transaction's code runs before it is its turn; its first request waits for the readings
    // before it, so the offset is read again after it: readings taken at once apply one after the other.
    const entries = await ctx.db.outbox.orderBy('seq').toArray()
    const delta = measured - offset.ms
    const changed = Math.abs(delta) >= MIN_OFFSET_CHANGE_MS
    // A reading just before this one may have moved the offset here already: then it stays as it is.
    if (changed || offset.learnedAt === undefined) offset.learnedAt = ctx.now()
    offset.boundMs = boundMs
    if (changed) {
      movedBy = delta
      const last = entries.at(-1)
      if (last !== undefined) offset.corrections.push({ beforeSeq: last.seq! + 1, deltaMs: delta })
      offset.ms = measured
      const skip = new Set<string>()
      for (const entry of entries) {
        skip.add(entry.hlc)
        const row = await descriptors[entry.kind].read(ctx, entry.projectId, entry.id)
        const stamp = row && stampOfRow(entry.kind, row)
        if (stamp !== undefined && readHlc(stamp)?.deviceId === ctx.clock.deviceId) skip.add(stamp)
      }
      ctx.clock.rewind(await highestStoredStamp(ctx.db, ctx.clock.now(), { maxLeadMs: boundMs, skip }))
    }
    await persist(ctx, offset)
  })
  showWarning(ctx)
  return { offsetMs: offset.ms, movedMs: movedBy }
}

/**
 * Stamps again the entries among `entries` that were written before a correction
 * of the clock (and whose record this device wrote): each record's stamp moves by
 * the correction, so the edits keep their order and their real time (never later
 * than now), and stays after `heldStamp(kind, id)` (what the document holds for
 * it, which the edit replaced). Their outbox entries are replaced by one entry each.
 * @returns the entries to publish: the others as given, the stamped ones with their new seq and
 * record; an entry no longer in the outbox (acked, or stamped again by another call) is left out.
 * @throws MemoryError `closed`, `quota_exceeded`.
 */
export async function restampPending<E extends StampedEntry>(
  ctx: StoreContext,
  entries: readonly E[],
  heldStamp?: (kind: MirroredKind, id: string) => string | undefined,
): Promise<E[]> {
  const descriptors = await loadSyncedKinds()
  const offset = ctx.clockOffset
  if (offset.corrections.length === 0 || !entries.some((e) => shiftOf(offset, e.seq) !== 0)) return [...entries]
  const latest = new Map<string, E>()
  for (const e of entries) {
    const key = `${e.kind}\u0000${e.projectId}\u0000${e.id}`
    if ((latest.get(key)?.seq ?? -1) < e.seq) latest.set(key, e)
  }
  const kept: E[] = []
  const restamped: E[] = []
  await write(ctx, stampedTables(descriptors), async () => {
    // The corrections are read after this transaction's first request: a reading of the relay's
    // time queued before it (another document's) may add one meanwhile, and it must count here.
    const present = new Set((await ctx.db.outbox.bulkGet(entries.map((e) => e.seq))).flatMap((row) => (row ? [row.seq!] : [])))
    const todo: Array<{ entry: E; row: Record<string, unknown>; stamp: string; shift: number }> = []
    for (const entry of latest.values()) {
      if (!present.has(entry.seq)) continue // acked or stamped again meanwhile: no longer this call's to publish
      const shift = shiftOf(offset, entry.seq)
      const row = shift === 0 ? undefined : ((await descriptors[entry.kind].read(ctx, entry.projectId, entry.id)) as Record<string, unknown> | undefined)
      const stamp = row && stampOfRow(entry.kind, row as { hlc?: string; at?: string })
      if (!row || stamp === undefined || readHlc(stamp)?.deviceId !== ctx.clock.deviceId) {
        kept.push(...entries.filter((e) => e.kind === entry.kind && e.projectId === entry.projectId && e.id === entry.id))
        continue
      }
      todo.push({ entry, row, stamp, shift })
    }
    // In the order they were stamped, so they keep it.
    todo.sort((a, b) => compareHlc(a.stamp, b.stamp))
    for (const { entry, row, stamp, shift } of todo) {
      const parts = readHlc(stamp)!
      let next = formatHlc(Math.max(0, Math.min(parts.physical + shift, 9_999_999_999_999)), parts.counter, parts.deviceId)
      // Never later than now: after a clock set back, stamps were issued just after the last one, not at wall time.
      if (parts.physical + shift > ctx.clock.now()) next = ctx.clock.tick()
      const held = heldStamp?.(entry.kind, entry.id)
      if (held !== undefined && compareHlc(next, held) <= 0) next = successorHlc(held, ctx.clock.deviceId)
      const stored = { ...row }
      if (entry.kind !== 'messages') stored.hlc = next
      // An append's stamp is its order key; an edit's stays at or after it (receivers check that).
      else if (stored.hlc === undefined) stored.at = next
      else
        stored.hlc =
          typeof stored.at === 'string' && compareHlc(next, stampOfRow('messages', { at: stored.at })) < 0 ? stampOfRow('messages', { at: stored.at }) : next
      await ctx.db.table(entry.kind).put(stored)
      ctx.clock.receive(next)
      const mine = entries.filter((e) => e.kind === entry.kind && e.projectId === entry.projectId && e.id === entry.id)
      const doc = (await ctx.db.outbox.get(entry.seq))?.doc ?? (entry.kind === 'messages' ? String(stored.sessionId) : '')
      await ctx.db.outbox.bulkDelete(mine.map((e) => e.seq))
      const fresh: OutboxRow = { kind: entry.kind, projectId: entry.projectId, doc, id: entry.id, op: entry.op, hlc: next }
      const seq = (await ctx.db.outbox.add(fresh)) as number
      restamped.push({ ...entry, seq, hlc: next, record: descriptors[entry.kind].toRecord(stored) })
    }
    // Corrections no entry is older than any more are done.
    const oldest = (await ctx.db.outbox.orderBy('seq').first())?.seq
    offset.corrections = oldest === undefined ? [] : offset.corrections.filter((c) => c.beforeSeq > oldest)
    await persist(ctx, offset)
  })
  return [...kept, ...restamped].sort((a, b) => a.seq - b.seq)
}
