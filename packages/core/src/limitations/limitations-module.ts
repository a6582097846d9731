import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * Limitations: what the agent knows it cannot do yet (store-wide), deduplicated
 * by title; the open ones are a section of `context.build` when the store has
 * the context module. The namespace's code loads on its first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [limitationsModule()] })
 */
export function limitationsModule(): MemoryModule<'limitations'> {
  return {
    name: 'limitations',
    tables: ['limitations'],
    create(c) {
      const load = loadOnUse('limitations', async () => (await import('./limitations.js')).createLimitations(storeOf(c)))
      return { limitations: methodsOnUse(load, ['store', 'open', 'resolve']) }
    },
  }
}
