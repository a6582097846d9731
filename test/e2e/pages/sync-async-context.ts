import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons'

/**
 * Browsers have no AsyncLocalStorage, which LangGraph's `interrupt()` reads
 * its run config from. This stand-in keeps the config while a runnable's
 * callback runs synchronously: enough for a node that calls `interrupt()`
 * before its first `await` (as a human-approval node does).
 */
export function installSyncAsyncContext(): void {
  let current: unknown
  AsyncLocalStorageProviderSingleton.initializeGlobalInstance({
    getStore: () => current,
    run<T>(store: unknown, callback: () => T): T {
      const previous = current
      current = store
      try {
        return callback()
      } finally {
        current = previous
      }
    },
    enterWith(store: unknown) {
      current = store
    },
  } as never)
}
