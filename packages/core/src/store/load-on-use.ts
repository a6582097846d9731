import { MemoryError } from './errors.js'

/**
 * Loads a part of the SDK the first time it is used (a dynamic `import()`), so
 * code an app may never call stays out of what loads at start. The load runs
 * once; a failed load (a chunk the server no longer has, a network failure)
 * rejects with `MemoryError` `internal` naming the part, and the next call
 * tries again.
 */
export function loadOnUse<T>(part: string, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () => {
    loading ??= load().catch((cause: unknown) => {
      loading = undefined
      throw new MemoryError('internal', `Engram could not load its ${part} code; check the app's network and bundle, then try again`, { cause })
    })
    return loading
  }
}

// biome-ignore lint/suspicious/noExplicitAny: any async method, whatever its arguments
type AsyncMethod = (...args: any[]) => Promise<unknown>

/** The async methods of `T`. */
export type AsyncMethodsOf<T> = { [K in keyof T]: T[K] extends AsyncMethod ? K : never }[keyof T]

/**
 * A namespace whose methods load its implementation on first call, then
 * forward to it: the same names and results, one load for all of them.
 */
export function methodsOnUse<T extends object, K extends AsyncMethodsOf<NoInfer<T>>>(load: () => Promise<T>, names: readonly K[]): Pick<T, K> {
  const api = {} as Pick<T, K>
  for (const name of names) {
    const forward: AsyncMethod = async (...args) => {
      const impl = await load()
      return (impl[name] as AsyncMethod).apply(impl, args)
    }
    api[name] = forward as T[K]
  }
  return api
}
