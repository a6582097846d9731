import { createArchive } from './archive.js'
import { createBlocks } from './blocks.js'
import { CHANGE_KINDS, createChangeFeed } from './change-feed.js'
import { createContextBuilder, type Summarizer } from './context/context.js'
import { createDump } from './dump.js'
import { MemoryError } from './errors.js'
import { createFacts } from './facts.js'
import { createHybridClock } from './hlc.js'
import { newId } from './ids.js'
import { mapError } from './map-error.js'
import type { Memory } from './memory.js'
import { createMessages } from './messages.js'
import { createProjects, prepareProjects } from './projects.js'
import { createReplication } from './replication.js'
import { createJournal } from './runtime/journal.js'
import { createLessons } from './runtime/lessons.js'
import { createRuns } from './runtime/runs.js'
import { createTasks } from './runtime/tasks.js'
import { createTurns, type Extractor } from './runtime/turns.js'
import { createUsage, type PricingTable } from './runtime/usage.js'
import { checkPricing } from './runtime/pricing.js'
import { EngramDb } from './schema.js'
import { createSearch } from './search/search.js'
import type { Analyzer } from './search/analyzer.js'
import { createTextIndex } from './search/text-index.js'
import { createSessions } from './sessions.js'
import { requestPersistence } from './storage-estimate.js'
import type { Embedder, StoreContext } from './store-context.js'
import { createSummaries } from './summaries.js'
import { estimateTokenizer, type Tokenizer } from './token-estimate.js'
import { checkId, checkOneOf, checkOptions } from './validate.js'

/** Options of {@link openMemory}. */
export interface MemoryOptions {
  /** Names the database `engram:<appId>:<userId>`. */
  appId: string
  userId: string
  /** IndexedDB factory; inject `fake-indexeddb` in Node. Default: the global one. */
  indexedDB?: IDBFactory
  IDBKeyRange?: typeof IDBKeyRange
  /** Enables vector and hybrid search. */
  embedder?: Embedder
  /** Counts tokens for budgets. Default: a fast estimate. */
  tokenizer?: Tokenizer
  /** Turns text into search terms; swap per language. Default: English (stop words, Porter stemmer). */
  analyzer?: Analyzer
  /** Condenses context overflow instead of dropping it. */
  summarizer?: Summarizer
  /** Turns a finished turn into memory writes. */
  extractor?: Extractor
  /** Extra model prices for usage cost estimates. */
  pricing?: PricingTable
  /** The clock (epoch ms); inject in tests. */
  now?: () => number
}

/** The name of the IndexedDB database that holds one app's memory for one user. */
export function databaseName(appId: string, userId: string): string {
  return `engram:${appId}:${userId}`
}

/**
 * Opens (creating on first use) the memory store of one app and user.
 *
 * @example
 * const memory = await openMemory({ appId: 'my-agent', userId: 'u_123' })
 * await memory.facts.set('user', 'name', 'Ada')
 * @throws MemoryError `invalid_input` on bad options (also `encryption`: at-rest encryption is
 * not supported yet, so it is refused rather than ignored), `conflict` when the database
 * was written by a newer version, `quota_exceeded` when storage is full.
 */
export async function openMemory(options: MemoryOptions): Promise<Memory> {
  const opts = checkOptions('options', options) as MemoryOptions
  const appId = checkId('appId', opts.appId)
  const userId = checkId('userId', opts.userId)
  checkPlugins(opts)
  const name = databaseName(appId, userId)
  const db = new EngramDb(name, { ...(opts.indexedDB ? { indexedDB: opts.indexedDB } : {}), ...(opts.IDBKeyRange ? { IDBKeyRange: opts.IDBKeyRange } : {}), ...(opts.analyzer ? { analyzer: opts.analyzer } : {}) })
  try {
    // Dexie 4 would open (and extend) a database that a newer schema wrote; refuse first.
    await refuseNewerSchema(opts.indexedDB ?? globalThis.indexedDB, name, db.verno)
    await db.open()
  } catch (error) {
    db.close()
    throw mapError(error)
  }
  const now = opts.now ?? Date.now
  const deviceId = await loadDeviceId(db, now)
  let closed = false
  const ctx: StoreContext = {
    db, appId, userId, now,
    tokenizer: opts.tokenizer ?? estimateTokenizer,
    embedder: opts.embedder,
    clock: createHybridClock(deviceId, now),
    feed: createChangeFeed(),
    syncedProjects: new Set(),
    index: createTextIndex(db, opts),
    options: opts as unknown as Record<string, unknown>,
    assertOpen() {
      if (closed) throw new MemoryError('closed', 'This memory store is closed; open it again with openMemory()')
    },
    onClose: [],
  }
  await prepareProjects(ctx)
  const dump = createDump(ctx)
  const memory = {
    appId, userId, deviceId,
    projects: createProjects(ctx),
    facts: createFacts(ctx),
    blocks: createBlocks(ctx),
    sessions: createSessions(ctx),
    messages: createMessages(ctx),
    summaries: createSummaries(ctx),
    archive: createArchive(ctx),
    search: createSearch(ctx),
    journal: createJournal(ctx),
    runs: createRuns(ctx),
    tasks: createTasks(ctx),
    usage: createUsage(ctx),
    lessons: createLessons(ctx),
    replication: createReplication(ctx),
    changes: { subscribe: (filter, listener) => subscribe(ctx, filter, listener) },
    stats: (projectId) => dump.stats(projectId),
    export: (projectId) => dump.export(projectId),
    import: (data, importOptions) => dump.import(data, importOptions),
    persist: () => requestPersistence(),
    close() {
      if (closed) return
      closed = true
      for (const stop of ctx.onClose.splice(0)) stop()
      db.close()
    },
    get closed() {
      return closed
    },
  } as Omit<Memory, 'context' | 'turns'> as Memory
  Object.assign(memory, { context: createContextBuilder(ctx, memory) })
  Object.assign(memory, { turns: createTurns(ctx, memory) })
  return memory
}

function subscribe(ctx: StoreContext, filter: Parameters<Memory['changes']['subscribe']>[0], listener: Parameters<Memory['changes']['subscribe']>[1]): () => void {
  ctx.assertOpen()
  const f = checkOptions('filter', filter, ['projectId', 'kinds'])
  if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'changes.subscribe needs a listener function')
  if (f.projectId !== undefined) checkId('filter.projectId', f.projectId)
  if (f.kinds !== undefined && !Array.isArray(f.kinds)) throw new MemoryError('invalid_input', 'filter.kinds must be an array')
  for (const kind of f.kinds ?? []) checkOneOf('filter.kinds[]', kind, CHANGE_KINDS)
  return ctx.feed.subscribe(f, listener)
}

function checkPlugins(opts: MemoryOptions): void {
  if ((opts as { encryption?: unknown }).encryption !== undefined) {
    // Ignoring it would leave the user believing their memory is encrypted on disk.
    throw new MemoryError('invalid_input', 'openMemory({ encryption }): at-rest encryption of the local store is not supported yet (rows are stored as plain data in IndexedDB); remove the option, and use startSync(memory, { encryption }) of @engram/sync to encrypt what leaves the device')
  }
  if (opts.embedder !== undefined) {
    const e = opts.embedder
    if (typeof e.embed !== 'function' || !Number.isInteger(e.dimensions) || e.dimensions < 1) {
      throw new MemoryError('invalid_input', 'embedder must be { dimensions: positive integer, embed(texts) }')
    }
  }
  if (opts.tokenizer !== undefined && typeof opts.tokenizer.count !== 'function') throw new MemoryError('invalid_input', 'tokenizer must have count(text)')
  if (opts.summarizer !== undefined && typeof opts.summarizer.summarize !== 'function') throw new MemoryError('invalid_input', 'summarizer must have summarize(texts, maxTokens)')
  if (opts.extractor !== undefined && typeof opts.extractor !== 'function') throw new MemoryError('invalid_input', 'extractor must be a function')
  const pricingProblem = checkPricing(opts.pricing)
  if (pricingProblem !== undefined) throw new MemoryError('invalid_input', pricingProblem)
  if (opts.now !== undefined && typeof opts.now !== 'function') throw new MemoryError('invalid_input', 'now must be a function returning epoch milliseconds')
}

async function refuseNewerSchema(factory: IDBFactory | undefined, name: string, verno: number): Promise<void> {
  if (typeof factory?.databases !== 'function') return
  const stored = (await factory.databases()).find((d) => d.name === name)?.version
  // Dexie stores version N as IndexedDB version N × 10.
  if (stored !== undefined && stored / 10 > verno) {
    throw new MemoryError('conflict', `Database ${name} was written by a newer Engram (schema ${stored / 10} > ${verno}); update the app`)
  }
}

async function loadDeviceId(db: EngramDb, now: () => number): Promise<string> {
  return db.transaction('rw', db.meta, async () => {
    const row = await db.meta.get('deviceId')
    if (typeof row?.value === 'string') return row.value
    const deviceId = newId(now()).replace(/-/g, '').slice(-16)
    await db.meta.put({ key: 'deviceId', value: deviceId })
    return deviceId
  })
}
