import { describe, expectTypeOf, it } from 'vitest'
import type { Memory } from '@engram/core'
import type { connectMemory, Promisified, RemoteMemory } from '@engram/worker'

interface WithAsyncMethod extends Memory {
  version(): Promise<string>
}
interface WithSyncMethod extends Memory {
  version(): string
}

// Checked by the compiler (npm run typecheck); at run time these assertions do nothing.
describe('the type connectMemory returns', () => {
  it('is exactly Memory, the type openMemory returns', () => {
    expectTypeOf<Awaited<ReturnType<typeof connectMemory>>>().toEqualTypeOf<Memory>()
    expectTypeOf<RemoteMemory>().toEqualTypeOf<Memory>()
  })

  it('needs no conversion: every method of Memory returns a Promise', () => {
    expectTypeOf<Promisified<Memory>>().toEqualTypeOf<Memory>()
    expectTypeOf<Memory['close']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<Memory['changes']['subscribe']>().returns.toEqualTypeOf<Promise<() => Promise<void>>>()
    expectTypeOf<Memory['status']['subscribe']>().returns.toEqualTypeOf<Promise<() => Promise<void>>>()
  })

  it('would tell a synchronous method apart (the checks above are not vacuous)', () => {
    expectTypeOf<Promisified<{ count(): number }>>().not.toEqualTypeOf<{ count(): number }>()
    expectTypeOf<Promisified<{ inner: { count(): number } }>>().not.toEqualTypeOf<{ inner: { count(): number } }>()
    expectTypeOf<Promisified<{ readonly inner: { count(): Promise<number> } }>>().toEqualTypeOf<{ readonly inner: { count(): Promise<number> } }>()
    // Memory with one more method: equal while it is async, different once it is synchronous.
    expectTypeOf<Promisified<WithAsyncMethod>>().toEqualTypeOf<WithAsyncMethod>()
    expectTypeOf<Promisified<WithSyncMethod>>().not.toEqualTypeOf<WithSyncMethod>()
  })
})
