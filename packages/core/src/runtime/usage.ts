import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'

/** Token and cost totals. */
export interface UsageSummary { calls: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; totalTokens: number; costUsd: number }
/** One model call's usage. */
export interface UsageRecord { sessionId: string; projectId?: string; model: string; inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number }

/** Price of a model in US dollars per million tokens. */
export interface ModelPrice { input: number; output: number; cacheRead?: number; cacheWrite?: number }
/** Model name (or prefix ending in `*`) → price. Apps extend the built-in table with theirs. */
export type PricingTable = Record<string, ModelPrice>

/** Token usage and estimated cost. */
export interface UsageApi {
  record(usage: UsageRecord): Promise<void>
  session(sessionId: string): Promise<UsageSummary>
  project(projectId: string): Promise<UsageSummary>
  total(): Promise<UsageSummary>
}

/** Creates the usage namespace of a store. */
export function createUsage(ctx: StoreContext): UsageApi {
  return pending('usage', ctx)
}
