import { type MemoryModule, storeOf } from '../module.js'
import { createPatterns } from '../patterns.js'

/**
 * Proactive patterns: what the agent noticed the user tends to do, reinforced
 * by every observation; they sync like facts, and the confident ones are a
 * section of `context.build` when the store has the context module.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [patternsModule()] })
 */
export function patternsModule(): MemoryModule<'patterns'> {
  return { name: 'patterns', tables: ['patterns'], create: (c) => ({ patterns: createPatterns(storeOf(c)) }) }
}
