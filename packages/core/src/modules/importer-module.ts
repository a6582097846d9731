import { createImporter } from '../dump-importer.js'
import { type MemoryModule, storeOf } from '../module.js'

/** `memory.import`: writes a dump from `memory.export` (this device's or another's), checked like the API's own writes. */
export function importerModule(): MemoryModule<'import'> {
  return { name: 'importer', tables: [], create: (ctx) => ({ import: createImporter(storeOf(ctx)) }) }
}
