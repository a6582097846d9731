import { createArchive } from './archive.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/** The archive: long passages recalled by search. */
export function archiveModule(): MemoryModule<'archive'> {
  return { name: 'archive', tables: ['passages'], create: (ctx) => ({ archive: createArchive(storeOf(ctx)) }) }
}
