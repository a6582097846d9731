import { MemoryError } from '@engram/core'

/**
 * Wraps a remote method so that an argument `postMessage` refuses (a function,
 * a symbol, a DOM node, a Promise…) fails with MemoryError `invalid_input`
 * naming the argument and the field, not Comlink's `DataCloneError`.
 * `postMessage` refuses such a message as a whole, before anything is sent:
 * nothing reaches the worker. Only then is the argument searched, with code
 * loaded on that first refusal, so the calls that succeed pay nothing.
 *
 * @throws MemoryError `invalid_input` (a rejected promise) naming the method, the argument and the field.
 */
export function withCloneCheck<A extends unknown[], R>(method: string, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await call(...args)
    } catch (error) {
      if ((error as Error | undefined)?.name !== 'DataCloneError') throw error
      throw new MemoryError('invalid_input', `${method}: ${(await import('./uncloneable.js')).describeUncloneable(args)}`, { cause: error })
    }
  }
}
