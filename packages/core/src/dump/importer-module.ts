import { loadOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * `memory.import`: writes a dump from `memory.export` (this device's or another's), checked like the API's own writes.
 * Its validation and writing code loads on the first import.
 */
export function importerModule(): MemoryModule<'import'> {
  return {
    name: 'importer',
    tables: [],
    create(ctx) {
      const load = loadOnUse('import', async () => (await import('./dump-importer.js')).createImporter(storeOf(ctx)))
      return { import: async (dump, options) => (await load())(dump, options) }
    },
  }
}
