import type { PricingTable } from './pricing.js'

/**
 * Built-in list prices (USD per million tokens, standard tier, 2025). Estimates only:
 * apps pass it (or their own table, or both merged) as the `pricing` option:
 * `openMemory({ …, pricing: { ...defaultPricing, ...mine } })`.
 */
export const defaultPricing: PricingTable = {
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
