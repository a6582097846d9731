import type { MemoryError } from '@engram/core'
import type { ConnectOptions, RemoteMemory } from '@engram/worker'

/** How a test page reaches the SDK host. */
export type HostKind = 'dedicated' | 'shared' | 'port' | 'fake-sync'

/** What `worker-page.ts` puts on `window` for tests to drive with `page.evaluate`. */
export interface Harness {
  open(kind: HostKind, userId: string, options?: Partial<ConnectOptions>): Promise<{ mode: string; deviceId: string }>
  /** Opens the store in the page itself (`openMemory`, no worker); `memory()` then returns it. */
  openLocal(userId: string, options?: { encryption?: { key: CryptoKey } }): Promise<{ mode: string; deviceId: string }>
  /** Every object store and index of the database `name`, read with the raw IndexedDB API, as text per part. */
  rawDump(name: string): Promise<Record<string, string>>
  memory(): RemoteMemory
  MemoryError: typeof MemoryError
  /** Changes seen by `watch()`, in order. */
  seen: { kind: string; op: string; id: string; projectId: string }[]
  watch(): Promise<void>
  unwatch(): Promise<void>
}

declare global {
  interface Window {
    harness: Harness
  }
}
