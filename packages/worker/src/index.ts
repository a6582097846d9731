export { MemoryError, isMemoryError, type MemoryErrorCode } from '@engram/core'
export { connectMemory, sendPort, type MemoryTarget } from './client.js'
export { exposeMemory, type ExposeOptions, type MemoryHost } from './host.js'
export { electLeader, type Election, type ElectOptions } from './election.js'
export { installTransferHandlers, summarizeError, reviveError, type ErrorSummary } from './transfer-handlers.js'
export { CONNECT_MESSAGE, holdLock, defaultLocks, type LockManagerLike } from './web-locks.js'
export type {
  Async,
  ClientPlugins,
  ConnectOptions,
  ConnectSyncOptions,
  MemoryCalls,
  OpenedInfo,
  OpenRequest,
  Promisified,
  RemoteMemory,
  StartSync,
  StartSyncOptions,
  SyncEncryption,
  SyncHandle,
  SyncStatus,
  WorkerContract,
} from './api.js'
