export { defaultPricing } from './runtime/default-pricing.js'
export type { ModelPrice, PricingTable } from './runtime/pricing.js'
