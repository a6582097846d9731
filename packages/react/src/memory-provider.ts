import type { Memory } from '@engram/core'
import { createContext, createElement, type ReactNode, useContext, useMemo } from 'react'
import { createQueryCache, type QueryCache } from './query-cache.js'

interface MemoryContextValue {
  memory: Memory | undefined
  cache: QueryCache | undefined
}

const MemoryContext = createContext<MemoryContextValue>({ memory: undefined, cache: undefined })

/** Props of {@link MemoryProvider}. */
export interface MemoryProviderProps {
  /**
   * The memory the hooks read: `openMemory` / `createMemory` in the page, or a
   * `connectMemory` worker client. Undefined while it is opening, and on the
   * server: the hooks then report `loading` and touch nothing.
   */
  memory: Memory | undefined
  children?: ReactNode
}

/**
 * Gives the hooks below it a memory. The hooks share one query cache per
 * memory: equal queries load once and hold one change subscription.
 *
 * @example
 * const memory = await connectMemory(new Worker(url, { type: 'module' }), { appId, userId })
 * root.render(<MemoryProvider memory={memory}><App /></MemoryProvider>)
 */
export function MemoryProvider({ memory, children }: MemoryProviderProps): ReactNode {
  const value = useMemo<MemoryContextValue>(() => ({ memory, cache: memory === undefined ? undefined : createQueryCache(memory) }), [memory])
  return createElement(MemoryContext.Provider, { value }, children)
}

/** The provider's memory, or undefined (none given yet, or on the server). */
export function useMemory(): Memory | undefined {
  return useContext(MemoryContext).memory
}

/** The provider's query cache (internal to the hooks). */
export function useQueryCache(): QueryCache | undefined {
  return useContext(MemoryContext).cache
}
