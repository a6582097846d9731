import * as Comlink from 'comlink'
import { MemoryError } from '@engram/core'
import type { ClientPlugins } from './api.js'

/** Names of the app-supplied functions a client can provide. */
export type PluginName = keyof ClientPlugins

/**
 * The app-supplied functions of every client connected to one store. In a
 * SharedWorker several tabs provide them; a call goes to the most recently
 * connected tab that provides the function, so a closed tab never serves one.
 */
export interface PluginPool {
  add(connectionId: string, plugins: Comlink.Remote<ClientPlugins>, names: readonly PluginName[]): void
  /** Forgets a connection's functions and releases their proxy (the port pair to that tab). */
  remove(connectionId: string): void
  /**
   * Calls a plugin in a connected tab.
   * @throws MemoryError `internal` when no connected tab provides it; the plugin's own error otherwise.
   */
  call<K extends PluginName>(name: K, ...args: Parameters<ClientPlugins[K]>): ReturnType<ClientPlugins[K]>
}

/** Creates an empty pool. */
export function createPluginPool(): PluginPool {
  const providers = new Map<string, { plugins: Comlink.Remote<ClientPlugins>; names: ReadonlySet<PluginName> }>()
  return {
    add(connectionId, plugins, names) {
      const previous = providers.get(connectionId)
      providers.delete(connectionId)
      if (previous && previous.plugins !== plugins) previous.plugins[Comlink.releaseProxy]()
      providers.set(connectionId, { plugins, names: new Set(names) })
    },
    remove(connectionId) {
      const provider = providers.get(connectionId)
      providers.delete(connectionId)
      provider?.plugins[Comlink.releaseProxy]()
    },
    call(name, ...args) {
      const all = [...providers.values()]
      for (let i = all.length - 1; i >= 0; i--) {
        const provider = all[i]!
        if (!provider.names.has(name)) continue
        const fn = provider.plugins[name] as unknown as (...a: unknown[]) => unknown
        return fn(...args) as ReturnType<ClientPlugins[typeof name]>
      }
      return Promise.reject(new MemoryError('internal', `No connected tab provides the ${name} function any more; reconnect with it`)) as ReturnType<
        ClientPlugins[typeof name]
      >
    },
  }
}
