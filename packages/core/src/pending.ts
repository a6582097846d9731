import { MemoryError } from './errors.js'
import type { StoreContext } from './store-context.js'

/** Scaffolding while a namespace is being built; removed once every namespace exists. */
export function pending<T extends object>(name: string, _ctx?: StoreContext): T {
  return new Proxy({} as T, {
    get: (_t, prop) => (typeof prop === 'string' && prop !== 'then' ? () => Promise.reject(new MemoryError('internal', `${name}.${prop} is being built`)) : undefined),
  })
}
