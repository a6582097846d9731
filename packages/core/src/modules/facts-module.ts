import { createFacts } from '../facts.js'
import { loadOnUse, methodsOnUse } from '../load-on-use.js'
import { type MemoryModule, storeOf } from '../module.js'

/**
 * Facts (key → JSON with history, soft delete, restore) and core blocks. Both
 * sync between devices when a project's sync is on. The blocks' code loads on
 * their first call (many stores keep facts only).
 *
 * @example const memory = await createMemory({ appId, userId, modules: [factsModule()] })
 */
export function factsModule(): MemoryModule<'facts' | 'blocks'> {
  return {
    name: 'facts',
    tables: ['facts', 'factVersions', 'blocks'],
    create(c) {
      const ctx = storeOf(c)
      const blocks = loadOnUse('blocks', async () => (await import('../blocks.js')).createBlocks(ctx))
      return { facts: createFacts(ctx), blocks: methodsOnUse(blocks, ['get', 'set', 'append', 'replace', 'delete', 'list']) }
    },
  }
}
