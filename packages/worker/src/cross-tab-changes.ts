import type { Change, ChangeFilter, Memory } from '@engram/core'

/** Change batches committed by the hosts of other tabs on the same database. */
export interface CrossTabChanges {
  /** @returns the unsubscribe function. */
  subscribe(filter: ChangeFilter, listener: (batch: Change[]) => void): () => void
  close(): void
}

/**
 * Relays every batch a store commits to the other hosts (other tabs' dedicated
 * workers) of the same database over a `BroadcastChannel`, and hands theirs to
 * local subscribers. Without it, a tab would not see writes made by another
 * tab — including those sync wrote in the tab that leads sync.
 * @returns undefined where `BroadcastChannel` does not exist (Node).
 */
export function relayChanges(memory: Memory, name: string): CrossTabChanges | undefined {
  if (typeof BroadcastChannel === 'undefined') return undefined
  const channel = new BroadcastChannel(name)
  const listeners = new Set<{ filter: ChangeFilter; listener: (batch: Change[]) => void }>()
  // Subscribing is async; a batch committed before it completes is seen by this tab's own subscribers anyway.
  const stopLocal = memory.changes.subscribe({}, (batch) => channel.postMessage(batch))
  channel.onmessage = (event: MessageEvent<Change[]>) => {
    for (const { filter, listener } of [...listeners]) {
      const selected = event.data.filter(
        (c) => (filter.projectId === undefined || filter.projectId === c.projectId) && (filter.kinds === undefined || filter.kinds.includes(c.kind)),
      )
      if (selected.length > 0) listener(selected)
    }
  }
  return {
    subscribe(filter, listener) {
      const entry = { filter: { ...filter }, listener }
      listeners.add(entry)
      return () => void listeners.delete(entry)
    },
    close() {
      void stopLocal.then((off) => off()).catch(() => {})
      listeners.clear()
      channel.close()
    },
  }
}
