import { useCallback, useSyncExternalStore } from 'react'
import type { QuerySpec } from './query-cache.js'
import { useQueryCache } from './memory-provider.js'
import { LOADING, type QueryState } from './query-state.js'

const noop = () => {}
const subscribeNothing = () => noop
const loading = () => LOADING

/**
 * Reads a query through the provider's cache with `useSyncExternalStore`.
 * Nothing is loaded during render or on the server (the server snapshot is
 * `loading`): loading and the change subscription start when React subscribes.
 * A `null` spec reads nothing and returns `idle`.
 */
export function useMemoryQuery<T>(spec: QuerySpec<T> | null, idle: QueryState<T> = LOADING): QueryState<T> {
  const cache = useQueryCache()
  const key = spec?.key
  // The spec is rebuilt each render; its key says when it is a different query.
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed by spec.key
  const subscribe = useCallback((listener: () => void) => (cache && spec ? cache.subscribe(spec, listener) : noop), [cache, key])
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed by spec.key
  const snapshot = useCallback(() => (cache && spec ? cache.snapshot(spec) : idle), [cache, key, idle])
  return useSyncExternalStore(cache && spec ? subscribe : subscribeNothing, cache && spec ? snapshot : () => idle, spec ? loading : () => idle)
}
