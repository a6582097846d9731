import type { RemoteMemory, SyncStatus } from '@engram/worker'

/** What `sync-page.ts` puts on `window` for the sync e2e test. */
export interface SyncHarness {
  /**
   * Connects a dedicated worker running the ready host with real sync to `relayUrl`, and turns sync on for project `user`.
   * With `skewMs`, the worker's wall clock is that far off (a device whose clock is wrong).
   */
  open(userId: string, relayUrl: string, options?: { skewMs?: number }): Promise<{ deviceId: string }>
  memory(): RemoteMemory
  /** Every status the page saw for project `user`, in order. */
  statuses: SyncStatus[]
  /** The latest status seen for project `user` ('off' before any). */
  current(): SyncStatus
}

declare global {
  interface Window {
    syncHarness: SyncHarness
    /** Mints a relay token in the test process (exposed by Playwright). */
    relayToken(): Promise<string>
  }
}
