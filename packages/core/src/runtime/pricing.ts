/** Model prices for usage cost estimates. */

/** Price of a model in US dollars per million tokens. Cache prices default to the input price. */
export interface ModelPrice { input: number; output: number; cacheRead?: number; cacheWrite?: number }
/** Model name (or prefix ending in `*`) → price. Apps extend the built-in table with theirs. */
export type PricingTable = Record<string, ModelPrice>

/**
 * Built-in list prices (USD per million tokens, standard tier, 2025). Estimates only:
 * apps with negotiated or newer prices pass `pricing` to `openMemory`, which wins.
 */
export const DEFAULT_PRICING: PricingTable = {
  'claude-opus-4-5*': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4*': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4*': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet*': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5*': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku*': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'gpt-5*': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini*': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano*': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-4.1*': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini*': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano*': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-4o*': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini*': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'o3*': { input: 2, output: 8, cacheRead: 0.5 },
  'o3-mini*': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  'o4-mini*': { input: 1.1, output: 4.4, cacheRead: 0.275 },
  'gemini-2.5-pro*': { input: 1.25, output: 10, cacheRead: 0.31 },
  'gemini-2.5-flash*': { input: 0.3, output: 2.5, cacheRead: 0.075 },
  'gemini-2.0-flash*': { input: 0.1, output: 0.4, cacheRead: 0.025 },
}

/** Token counts priced by {@link estimateCost}. */
export interface TokenCounts { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }

/**
 * Finds a model's price: an exact entry first, else the longest `prefix*` entry that
 * matches (case-insensitive). The app's table is searched before the built-in one.
 */
export function findPrice(model: string, tables: readonly PricingTable[]): ModelPrice | undefined {
  const name = model.toLowerCase()
  for (const table of tables) {
    let best: { price: ModelPrice; length: number } | undefined
    for (const [pattern, price] of Object.entries(table)) {
      const p = pattern.toLowerCase()
      if (p === name) return price
      if (p.endsWith('*') && name.startsWith(p.slice(0, -1)) && (best === undefined || p.length > best.length)) best = { price, length: p.length }
    }
    if (best) return best.price
  }
  return undefined
}

/** Estimated cost in USD of one call; undefined for a model with no price. */
export function estimateCost(model: string, tokens: TokenCounts, tables: readonly PricingTable[]): number | undefined {
  const price = findPrice(model, tables)
  if (!price) return undefined
  const perToken = (usdPerMillion: number) => usdPerMillion / 1_000_000
  return tokens.inputTokens * perToken(price.input)
    + tokens.outputTokens * perToken(price.output)
    + tokens.cacheReadTokens * perToken(price.cacheRead ?? price.input)
    + tokens.cacheWriteTokens * perToken(price.cacheWrite ?? price.input)
}

/** Checks an app-supplied pricing table; returns it or throws a message. */
export function checkPricing(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'pricing must be an object of model → { input, output, cacheRead?, cacheWrite? }'
  for (const [model, price] of Object.entries(value)) {
    const p = price as Partial<ModelPrice> | null
    const ok = (n: unknown, optional: boolean) => (optional && n === undefined) || (typeof n === 'number' && Number.isFinite(n) && n >= 0)
    if (typeof p !== 'object' || p === null || !ok(p.input, false) || !ok(p.output, false) || !ok(p.cacheRead, true) || !ok(p.cacheWrite, true)) {
      return `pricing[${JSON.stringify(model)}] must be { input, output, cacheRead?, cacheWrite? } in USD per million tokens (numbers ≥ 0)`
    }
  }
  return undefined
}
