import { afterEach } from 'vitest'
import type { createLoopbackNetwork, Sync } from '@engram/sync'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Closes `closable` after the current test, newest first. */
export function track<T extends { close(): Promise<void> }>(closable: T): T {
  cleanups.push(() => closable.close())
  return closable
}

/** Flushes every sync and delivers the loopback network's frames until nothing moves (30 rounds at most). */
export async function settle(network: ReturnType<typeof createLoopbackNetwork>, syncs: Sync[]): Promise<void> {
  for (let round = 0; round < 30; round++) {
    await Promise.all(syncs.map((s) => s.flush()))
    if ((await network.settle()) === 0) return
  }
}
