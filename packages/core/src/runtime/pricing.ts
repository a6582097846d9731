/** Model prices for usage cost estimates. */

/** Price of a model in US dollars per million tokens. Cache prices default to the input price. */
export interface ModelPrice {
  input: number
  output: number
  cacheRead?: number
  cacheWrite?: number
}
/** Model name (or prefix ending in `*`) → price. `defaultPricing` (`@engram/core/pricing`) is one; apps pass theirs. */
export type PricingTable = Record<string, ModelPrice>

/** Token counts priced by {@link estimateCost}. */
export interface TokenCounts {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}

/**
 * Finds a model's price: an exact entry first, else the longest `prefix*` entry that
 * matches (case-insensitive). Earlier tables are searched first.
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
  return (
    tokens.inputTokens * perToken(price.input) +
    tokens.outputTokens * perToken(price.output) +
    tokens.cacheReadTokens * perToken(price.cacheRead ?? price.input) +
    tokens.cacheWriteTokens * perToken(price.cacheWrite ?? price.input)
  )
}

/** Checks an app-supplied pricing table; returns it or throws a message. */
export function checkPricing(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'pricing must be an object of model → { input, output, cacheRead?, cacheWrite? }'
  for (const [model, price] of Object.entries(value)) {
    const p = price as Partial<ModelPrice> | null
    const ok = (n: unknown, optional: boolean) => (optional && n === undefined) || (typeof n === 'number' && Number.isFinite(n) && n >= 0)
    if (typeof p !== 'object' || p === null || !ok(p.input, false) || !ok(p.output, false) || !ok(p.cacheRead, true) || !ok(p.cacheWrite, true)) {
      return `pricing[${JSON.stringify(model)}] must be { input, output, cacheRead?, cacheWrite? } in USD per million tokens (numbers ≥ 0)`
    }
  }
  return undefined
}
