export { EngramSaver, type EngramSaverOptions } from './engram-saver.js'
export { EngramStore, type StoreMemory } from './engram-store.js'
export type { EngramStoreOptions } from './store-options.js'
export type { RunsMemory } from './run-blobs.js'
