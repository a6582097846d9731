import { createBlocks } from '../blocks.js'
import { createFacts } from '../facts.js'
import { type MemoryModule, storeOf } from '../module.js'

/**
 * Facts (key → JSON with history, soft delete, restore) and core blocks. Both
 * sync between devices when a project's sync is on.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [factsModule()] })
 */
export function factsModule(): MemoryModule<'facts' | 'blocks'> {
  return {
    name: 'facts',
    tables: ['facts', 'factVersions', 'blocks'],
    create(c) {
      const ctx = storeOf(c)
      return { facts: createFacts(ctx), blocks: createBlocks(ctx) }
    },
  }
}
