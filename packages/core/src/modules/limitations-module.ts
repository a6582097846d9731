import { createLimitations } from '../limitations.js'
import { type MemoryModule, storeOf } from '../module.js'

/**
 * Limitations: what the agent knows it cannot do yet (store-wide), deduplicated
 * by title; the open ones are a section of `context.build` when the store has
 * the context module.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [limitationsModule()] })
 */
export function limitationsModule(): MemoryModule<'limitations'> {
  return { name: 'limitations', tables: ['limitations'], create: (c) => ({ limitations: createLimitations(storeOf(c)) }) }
}
