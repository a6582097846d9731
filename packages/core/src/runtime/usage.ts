import type { Collection, Table } from 'dexie'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkNumber, checkOptions, checkString } from '../store/validate.js'
import { read, write } from '../store/write.js'
import { estimateCost, type PricingTable } from './pricing.js'

export type { ModelPrice, PricingTable } from './pricing.js'

/**
 * Token and cost totals. `totalTokens` sums all four token counts. `costUsd` is an
 * estimate over the priced calls only, rounded to 10 decimals (no float noise such as
 * 0.30000000000000004); calls of models with no price count 0 and are listed in
 * `unpricedModels` (with `unpricedCalls`).
 */
export interface UsageSummary {
  calls: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  totalTokens: number
  costUsd: number
  /** Calls whose model has no price (their cost counts as 0). */
  unpricedCalls: number
  /** Models with no price, sorted. Add them with the `pricing` option of `openMemory`. */
  unpricedModels: string[]
}
/**
 * One model call's usage. `inputTokens` are the uncached input tokens; cache reads and
 * writes are counted apart (as Anthropic reports them; for OpenAI subtract cached tokens
 * from `prompt_tokens`).
 */
export interface UsageRecord {
  sessionId: string
  projectId?: string
  model: string
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
}

/** A stored usage record with its estimated cost (priced when recorded). */
/** A stored usage record: the call with its estimated cost (priced when appended). */
export interface UsageEntry extends Required<Omit<UsageRecord, 'projectId'>> {
  seq: number
  projectId?: string
  costUsd: number
  priced: boolean
  at: number
}
type UsageRow = Omit<UsageEntry, 'seq'> & { seq?: number }

const MAX_MODEL = 200
/** Decimals `costUsd` totals are rounded to (USD). */
export const COST_DECIMALS = 10
const TABLES = ['usage']

/** Token usage and estimated cost. Session ids are any string; a project is optional and need not exist. */
export interface UsageApi {
  /**
   * Appends one model call. The cost is estimated now from the store's `pricing` table
   * (none: the call is unpriced) and kept with the record.
   * @throws MemoryError `invalid_input` (bad id, model or token count).
   */
  append(usage: UsageRecord): Promise<UsageEntry>
  /** Totals of one session. @throws MemoryError `invalid_input`. */
  session(sessionId: string): Promise<UsageSummary>
  /** Totals of the calls recorded with that project. @throws MemoryError `invalid_input`. */
  project(projectId: string): Promise<UsageSummary>
  /** Totals of every call in the store. @throws MemoryError `closed` after close(). */
  total(): Promise<UsageSummary>
}

/** Creates the usage namespace of a store. */
export function createUsage(ctx: StoreContext, pricing?: PricingTable): UsageApi {
  const usage = (): Table<UsageRow, number> => ctx.db.table<UsageRow, number>('usage')
  const tables: PricingTable[] = pricing ? [pricing] : []
  const summarise = (rows: () => Collection<UsageRow, number> | Table<UsageRow, number>) => read(ctx, TABLES, async () => summary(await rows().toArray()))

  return {
    async append(record) {
      const r = checkOptions('usage', record, ['sessionId', 'projectId', 'model', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'])
      const sessionId = checkId('sessionId', r.sessionId)
      const projectId = r.projectId === undefined ? undefined : checkId('projectId', r.projectId)
      const model = checkId('model', checkString('model', r.model, { maxLength: MAX_MODEL }))
      const count = (name: string, v: unknown) => checkNumber(name, v, { min: 0, integer: true })
      const optionalCount = (name: string, v: unknown) => (v === undefined ? 0 : count(name, v))
      const tokens = {
        inputTokens: count('inputTokens', r.inputTokens),
        outputTokens: count('outputTokens', r.outputTokens),
        cacheReadTokens: optionalCount('cacheReadTokens', r.cacheReadTokens),
        cacheWriteTokens: optionalCount('cacheWriteTokens', r.cacheWriteTokens),
      }
      const cost = estimateCost(model, tokens, tables)
      const row: UsageRow = { sessionId, model, ...tokens, costUsd: cost ?? 0, priced: cost !== undefined, at: ctx.now() }
      if (projectId !== undefined) row.projectId = projectId
      return write(ctx, TABLES, async (w) => {
        const seq = await usage().add(row)
        w.change('usage', 'put', String(seq), projectId ?? '')
        return { ...row, seq }
      })
    },
    async session(sessionId) {
      checkId('sessionId', sessionId)
      return summarise(() => usage().where('sessionId').equals(sessionId))
    },
    async project(projectId) {
      checkId('projectId', projectId)
      return summarise(() => usage().where('projectId').equals(projectId))
    },
    async total() {
      return summarise(() => usage())
    },
  }
}

function summary(rows: readonly UsageRow[]): UsageSummary {
  const s: UsageSummary = {
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    unpricedCalls: 0,
    unpricedModels: [],
  }
  const unpriced = new Set<string>()
  for (const r of rows) {
    s.calls++
    s.inputTokens += r.inputTokens
    s.outputTokens += r.outputTokens
    s.cacheReadTokens += r.cacheReadTokens
    s.cacheWriteTokens += r.cacheWriteTokens
    s.costUsd += r.costUsd
    if (!r.priced) {
      s.unpricedCalls++
      unpriced.add(r.model)
    }
  }
  s.totalTokens = s.inputTokens + s.outputTokens + s.cacheReadTokens + s.cacheWriteTokens
  s.unpricedModels = [...unpriced].sort()
  // Sums of float prices drift (0.1 + 0.2); 10 decimals keep a single cached token of the cheapest model.
  s.costUsd = Number(s.costUsd.toFixed(COST_DECIMALS))
  return s
}
