import { Dexie, type Transaction } from 'dexie'
import type { Change, Origin } from './change-feed.js'
import { compareHlc, successorHlc } from './hlc.js'
import { mapError } from './map-error.js'
import type { StoreContext } from './store-context.js'
import type { OutboxRow } from './rows.js'
import type { MirroredKind } from '../catalog/lists.js'

/** What a write function can do inside its transaction. */
export interface WriteScope {
  readonly tx: Transaction
  readonly origin: Origin
  /** Records a change, emitted after commit (and queued for sync when mirrored). */
  change(kind: Change['kind'], op: Change['op'], id: string, projectId: string): void
  /**
   * The hybrid-logical-clock stamp of this transaction (one per transaction). With `replaces`,
   * the stamp of the stored row the write replaces, the stamp returned sorts after it: when the
   * transaction's stamp does not (the row came from a clock far ahead, which this clock does not
   * follow), the stamp just after that row's, so the later edit still wins on every device.
   */
  hlc(replaces?: string): string
  /** Runs `fn` once, inside the transaction, after the write function returns and before commit (e.g. to flush accumulated counters). */
  onBeforeCommit(fn: () => Promise<void>): void
}

const scopes = new WeakMap<Transaction, Scope>()

class Scope implements WriteScope {
  readonly changes: Change[] = []
  readonly beforeCommit: Array<() => Promise<void>> = []
  tx!: Transaction
  private stamp: string | undefined
  constructor(
    private readonly ctx: StoreContext,
    readonly origin: Origin,
    private readonly fixedStamp?: string,
  ) {}

  change(kind: Change['kind'], op: Change['op'], id: string, projectId: string): void {
    this.changes.push({ kind, op, id, projectId, origin: this.origin })
  }

  onBeforeCommit(fn: () => Promise<void>): void {
    this.beforeCommit.push(fn)
  }

  hlc(replaces?: string): string {
    this.stamp ??= this.fixedStamp ?? this.ctx.clock.tick()
    if (replaces === undefined || this.fixedStamp !== undefined || compareHlc(this.stamp, replaces) > 0) return this.stamp
    return successorHlc(replaces, this.ctx.clock.deviceId)
  }

  /** Local writes to mirrored kinds of synced projects go to the outbox, in this transaction. */
  async queueOutbox(): Promise<void> {
    if (this.origin !== 'local') return
    const rows: OutboxRow[] = this.changes
      .filter((c) => this.ctx.mirrored.always.has(c.kind) && this.ctx.syncedProjects.has(c.projectId))
      .map((c) => ({ kind: c.kind as MirroredKind, projectId: c.projectId, doc: '', id: c.id, op: c.op, hlc: this.hlc() }))
    if (this.ctx.conversationProjects.size > 0) rows.push(...(await this.conversationOutbox()))
    if (rows.length > 0) await this.ctx.db.outbox.bulkAdd(rows)
  }

  /**
   * Outbox entries of sessions and messages in projects whose conversations sync: a message
   * goes to its session's document, a session to the project document. The session write of
   * an append (its activity time) does not travel: the messages carry it.
   */
  private async conversationOutbox(): Promise<OutboxRow[]> {
    const changes = this.changes.filter((c) => this.ctx.mirrored.conversations.has(c.kind) && this.ctx.conversationProjects.has(c.projectId))
    if (changes.length === 0) return []
    const appended = new Set(changes.filter((c) => c.kind === 'messages' && c.op === 'put').map((c) => c.projectId))
    const messageIds = changes.filter((c) => c.kind === 'messages' && c.op === 'put').map((c) => c.id)
    const messages = messageIds.length === 0 ? [] : await this.ctx.db.messages.bulkGet(messageIds)
    const sessionOf = new Map(messages.flatMap((m) => (m ? [[m.id, m.sessionId] as const] : [])))
    const rows: OutboxRow[] = []
    for (const c of changes) {
      if (c.kind === 'sessions' && !(c.op === 'put' && appended.has(c.projectId)))
        rows.push({ kind: 'sessions', projectId: c.projectId, doc: '', id: c.id, op: c.op, hlc: this.hlc() })
      const doc = c.kind === 'messages' ? sessionOf.get(c.id) : undefined
      if (doc !== undefined) rows.push({ kind: 'messages', projectId: c.projectId, doc, id: c.id, op: c.op, hlc: this.hlc() })
      // Other conversation kinds (observations) travel in the project document with the sessions list.
      else if (c.kind !== 'sessions' && c.kind !== 'messages')
        rows.push({ kind: c.kind as MirroredKind, projectId: c.projectId, doc: '', id: c.id, op: c.op, hlc: this.hlc() })
    }
    return rows
  }
}

/**
 * Runs `fn` in one read-write Dexie transaction over `tables` and, after it
 * commits, emits the changes it recorded as one batch. A nested call joins the
 * outer transaction (its tables must be in the outer scope). Never await
 * anything but Dexie inside `fn`: IndexedDB commits a transaction that waits
 * on anything else.
 *
 * @throws MemoryError mapped from the storage failure (`quota_exceeded`, `closed`, …).
 */
export async function write<T>(
  ctx: StoreContext,
  tables: readonly string[],
  fn: (w: WriteScope) => Promise<T>,
  options: { origin?: Origin; hlc?: string } = {},
): Promise<T> {
  const outer = Dexie.currentTransaction
  const parent = outer ? scopes.get(outer) : undefined
  if (parent) return fn(parent)
  ctx.assertOpen()
  const scope = new Scope(ctx, options.origin ?? 'local', options.hlc)
  const scopeTables = tables.some((t) => ctx.mirrored.always.has(t) || ctx.mirrored.conversations.has(t)) ? [...new Set([...tables, 'outbox'])] : [...tables]
  let result: T
  try {
    result = await ctx.db.transaction('rw', scopeTables, async (tx) => {
      scope.tx = tx
      scopes.set(tx, scope)
      const value = await fn(scope)
      for (const hook of scope.beforeCommit) await hook()
      await scope.queueOutbox()
      return value
    })
  } catch (error) {
    throw mapError(error)
  }
  ctx.feed.emit(scope.changes)
  return result
}

/**
 * Runs a single-request read (one `get`) without an explicit transaction: one
 * IndexedDB request is atomic on its own, and skipping the transaction setup
 * makes point reads ~0.1 ms faster. Use {@link read} for anything that issues
 * more than one request.
 */
export async function readOne<T>(ctx: StoreContext, fn: () => Promise<T>): Promise<T> {
  ctx.assertOpen()
  try {
    return await fn()
  } catch (error) {
    throw mapError(error)
  }
}

/** Runs a read in a read-only transaction so it sees one consistent snapshot. */
export async function read<T>(ctx: StoreContext, tables: readonly string[], fn: () => Promise<T>): Promise<T> {
  ctx.assertOpen()
  if (Dexie.currentTransaction) return fn()
  try {
    return await ctx.db.transaction('r', tables as string[], fn)
  } catch (error) {
    throw mapError(error)
  }
}
