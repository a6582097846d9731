export { EngramSaver, type EngramSaverOptions } from './engram-saver.js'
export type { RunsMemory } from './run-blobs.js'
