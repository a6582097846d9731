import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * Proactive patterns: what the agent noticed the user tends to do, reinforced
 * by every observation; they sync like facts, and the confident ones are a
 * section of `context.build` when the store has the context module. The
 * namespace's code loads on its first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [patternsModule()] })
 */
export function patternsModule(): MemoryModule<'patterns'> {
  return {
    name: 'patterns',
    tables: ['patterns'],
    create(c) {
      const load = loadOnUse('patterns', async () => (await import('./patterns.js')).createPatterns(storeOf(c)))
      return { patterns: methodsOnUse(load, ['observe', 'list', 'delete']) }
    },
  }
}
