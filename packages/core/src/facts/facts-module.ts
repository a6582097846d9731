import { createFacts, FACT_EDITS } from './facts.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * Facts (key → JSON with history, soft delete, restore) and core blocks. Both
 * sync between devices when a project's sync is on. The blocks' code loads on
 * their first call (many stores keep facts only), and so does that of the facts
 * methods besides set, get, list and delete.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [factsModule()] })
 */
export function factsModule(): MemoryModule<'facts' | 'blocks'> {
  return {
    name: 'facts',
    tables: ['facts', 'factVersions', 'blocks'],
    create(c) {
      const ctx = storeOf(c)
      const blocks = loadOnUse('blocks', async () => (await import('../blocks/blocks.js')).createBlocks(ctx))
      const edits = loadOnUse('fact edits', async () => (await import('./fact-edits.js')).createFactEdits(ctx))
      return {
        facts: { ...createFacts(ctx), ...methodsOnUse(edits, FACT_EDITS) },
        blocks: methodsOnUse(blocks, ['get', 'set', 'append', 'replace', 'delete', 'list']),
      }
    },
  }
}
