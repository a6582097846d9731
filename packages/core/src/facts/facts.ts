import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import { checkFactInput } from './facts-input.js'
import { latestVersion } from './facts-history.js'
import { type EarlyFactWrites, factDoc, factId, factTables, storeFactRow, tagKeysOf, toFact } from './facts-rows.js'
import { liveProject } from '../projects/projects.js'
import type { FactRow, Source } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkPageOptions, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkString, type Json } from '../store/validate.js'
import { type WriteScope, read, readOne, write } from '../store/write.js'

export { factId } from './facts-rows.js'

/** A fact: a key → JSON value the agent believes, with provenance. */
export interface Fact {
  id: string
  projectId: string
  key: string
  value: Json
  confidence: number
  source?: Source
  tags: string[]
  createdAt: number
  updatedAt: number
  deletedAt?: number
  version: number
  /** When it expires (epoch ms), if it was set with `expiresAt`. */
  expiresAt?: number
}
/** One version of a fact in its history. */
export interface FactVersion {
  key: string
  value: Json
  version: number
  validFrom: number
  validTo?: number
  deleted: boolean
  source?: Source
  confidence: number
}
/** Options of {@link FactsApi.set}. */
export interface SetFactOptions {
  confidence?: number
  source?: Source
  tags?: string[]
  /** After this time (epoch ms) the fact leaves search and `context.build`, and a background sweep purges it (a purge that syncs). */
  expiresAt?: number
}
/** Options of {@link FactsApi.list}. */
export interface ListFactsOptions extends PageOptions {
  tag?: string
  prefix?: string
}

/** Facts of a project: upsert by key with history, soft delete and restore. */
export interface FactsApi {
  /**
   * Creates or replaces the fact `key`: a new version (the old one stays in history).
   * Setting a soft-deleted key restores it with the new value.
   * @throws MemoryError `invalid_input` (bad id/key/value/confidence/source/tags), `limit_exceeded`
   * (value over 1 MiB as JSON), `not_found` (unknown or archived project).
   */
  set(projectId: string, key: string, value: Json, options?: SetFactOptions): Promise<Fact>
  /** The active fact, or undefined when missing or soft-deleted. @throws MemoryError `invalid_input`. */
  get(projectId: string, key: string): Promise<Fact | undefined>
  /** Active facts ordered by key, optionally by tag and/or key prefix, one page (cursor: the last key). @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: ListFactsOptions): Promise<Page<Fact>>
  /** Soft-deletes a fact; true if it was active. @throws MemoryError `invalid_input`, `not_found` (project). */
  delete(projectId: string, key: string): Promise<boolean>
  /** Soft-deletes every active fact (with `tag`) in one transaction; returns how many. @throws MemoryError `invalid_input`, `not_found` (project). */
  deleteAll(projectId: string, options?: { tag?: string }): Promise<number>
  /** Brings back a soft-deleted fact as a new version; undefined when nothing was deleted. @throws MemoryError `invalid_input`, `not_found` (project). */
  restore(projectId: string, key: string): Promise<Fact | undefined>
  /** Soft-deleted facts, newest deletion first (ties by key), one page. @throws MemoryError `invalid_input`. */
  deleted(projectId: string, options?: PageOptions): Promise<Page<Fact>>
  /**
   * Hard delete, history included. With `key`: that fact whatever its state; without: every
   * soft-deleted fact of the project. Returns how many facts were removed.
   * @throws MemoryError `invalid_input`, `not_found` (project).
   */
  purge(projectId: string, key?: string): Promise<number>
  /** Every version of a key, oldest first, with validFrom/validTo. @throws MemoryError `invalid_input`. */
  history(projectId: string, key: string): Promise<FactVersion[]>
  /** The value believed at `time` (epoch ms); undefined if none or deleted then. @throws MemoryError `invalid_input`. */
  at(projectId: string, key: string, time: number): Promise<Json | undefined>
}

/** Most fact ids a store remembers as stored (see `seen` in {@link createFacts}). */
const MAX_SEEN = 4096

/** The next state of a fact: version + 1 over `stored` (or version 1), stamped `at` (default now) or at `deletedAt`. */
export function nextFactRow(
  ctx: StoreContext,
  stored: FactRow | undefined,
  base: Omit<FactRow, 'id' | 'createdAt' | 'updatedAt' | 'version' | 'hlc' | 'tagKeys'>,
  hlc: string,
  deletedAt?: number,
  at?: number,
): FactRow {
  const now = deletedAt ?? at ?? ctx.now()
  const { deletedAt: _dropped, ...rest } = base as FactRow
  const row: FactRow = {
    ...rest,
    id: factId(base.projectId, base.key),
    tagKeys: tagKeysOf(base.projectId, base.tags),
    createdAt: stored?.createdAt ?? now,
    updatedAt: now,
    version: (stored?.version ?? 0) + 1,
    hlc,
  }
  if (deletedAt !== undefined) row.deletedAt = deletedAt
  return row
}

/** The stored row of a key after checking its project: both reads go out together (one round trip), a chain of Dexie promises. */
export function storedInProject(ctx: StoreContext, projectId: string, key: string): Promise<FactRow | undefined> {
  return Dexie.Promise.all([liveProject(ctx, projectId), ctx.db.facts.get([projectId, key])]).then(([, stored]) => stored)
}

/** Soft-deletes a stored fact: a new version, deleted at `now`. */
export async function softDeleteFact(ctx: StoreContext, w: WriteScope, stored: FactRow, now: number): Promise<void> {
  await storeFactRow(ctx, w, nextFactRow(ctx, stored, stored, w.hlc(stored.hlc), now), 'local')
}

/** Methods of the facts namespace that load on their first call (fact-edits.ts). */
export const FACT_EDITS = ['deleteAll', 'restore', 'deleted', 'purge', 'history', 'at'] as const

/** Creates the facts namespace of a store, but for {@link FACT_EDITS}. */
export function createFacts(ctx: StoreContext): Omit<FactsApi, (typeof FACT_EDITS)[number]> {
  const { db } = ctx
  const tables = (): string[] => factTables(ctx)
  /**
   * Ids of facts this store saw stored (set, read, deleted here): a hint, never trusted for what
   * is written. Setting one of them puts its index entry and reads its newest version together
   * with the first reads, so replacing a stored key takes two round trips rather than three; a
   * wrong hint costs two reads, and a key set for the first time takes the path without them.
   */
  const seen = new Set<string>()
  const remember = (id: string): void => {
    if (seen.size >= MAX_SEEN) seen.clear()
    seen.add(id)
  }

  return {
    async set(projectId, key, value, options) {
      const input = checkFactInput(projectId, key, value, options)
      const id = factId(projectId, key)
      const fact = await write(ctx, tables(), async (w) => {
        const now = ctx.now()
        const early: EarlyFactWrites = {}
        // Likely a stored key: its newest version is read with it, and its index entry (replacing
        // the older one) goes out right after the reads, while they run.
        const likely = seen.has(id)
        const reads = Dexie.Promise.all([storedInProject(ctx, projectId, key), likely ? latestVersion(ctx, projectId, key) : undefined])
        if (likely) {
          early.indexed = ctx.index.put(w, factDoc({ id, projectId, key, value: input.value, updatedAt: now }), { fresh: false })
          early.indexed.catch(() => {}) // awaited below; a failed read first must not leave it unhandled
        }
        const [stored, newest] = await reads
        early.latest = newest
        // A purged key starts over as a new fact (only its version number continues).
        const row = nextFactRow(ctx, stored?.purged ? { ...stored, createdAt: now } : stored, input, w.hlc(stored?.hlc), undefined, now)
        await storeFactRow(ctx, w, row, 'local', stored === undefined, early)
        return toFact(row)
      })
      remember(id)
      return fact
    },

    async get(projectId, key) {
      checkId('projectId', projectId)
      checkId('key', key)
      const row = await readOne(ctx, () => db.facts.get([projectId, key]))
      if (row) remember(row.id)
      return row && row.deletedAt === undefined ? toFact(row) : undefined
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const { tag, prefix, after, limit } = checkPageOptions(options, ['tag', 'prefix'])
      if (tag !== undefined) checkId('tag', tag)
      if (prefix !== undefined) checkString('prefix', prefix)
      const p = prefix ?? ''
      const rows = await read(ctx, ['facts'], async () => {
        if (tag !== undefined) {
          const tagged = await db.facts
            .where('tagKeys')
            .equals(tagKeysOf(projectId, [tag])[0]!)
            .toArray()
          return tagged
            .filter((r) => r.deletedAt === undefined && r.projectId === projectId && r.key.startsWith(p) && (after === undefined || r.key > after))
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
            .slice(0, limit + 1)
        }
        // Ranges read whole (one getAll each) and filtered here: a Dexie filter walks a cursor, a
        // request per row, which for a long list costs most of its time. A range whose rows are
        // mostly deleted is read on from its last key until the page is full.
        let from = after !== undefined && after > p ? after : p
        let inclusive = after === undefined || from !== after
        const live: FactRow[] = []
        for (;;) {
          const want = limit + 1 - live.length
          const rows = await db.facts
            .where('[projectId+key]')
            .between([projectId, from], [projectId, prefixUpper(p)], inclusive, false)
            .limit(want)
            .toArray()
          for (const r of rows) if (r.deletedAt === undefined && r.key.startsWith(p)) live.push(r)
          if (rows.length < want || live.length > limit) return live
          from = rows[rows.length - 1]!.key
          inclusive = false
        }
      })
      return pageFrom(rows.map(toFact), limit, (f) => f.key)
    },

    async delete(projectId, key) {
      checkId('projectId', projectId)
      checkId('key', key)
      return write(ctx, tables(), async (w) => {
        const stored = await storedInProject(ctx, projectId, key)
        if (!stored || stored.deletedAt !== undefined) return false
        await softDeleteFact(ctx, w, stored, ctx.now())
        return true
      })
    },
  }
}

/** The smallest string greater than every string that starts with `prefix` (exclusive upper bound). */
function prefixUpper(prefix: string): string | unknown[] {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const unit = prefix.charCodeAt(i)
    if (unit < 0xffff) return prefix.slice(0, i) + String.fromCharCode(unit + 1)
  }
  return maxKey()
}
