import { afterEach, describe, expect, it, vi } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('storage estimate and persistence', () => {
  it('stats() carries the browser estimate and persist() its answer, where the browser gives them', async () => {
    const persist = vi.fn(async () => true)
    vi.stubGlobal('navigator', { storage: { estimate: async () => ({ usage: 123_456, quota: 9_000_000 }), persist } })
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p' })
    expect((await memory.stats()).storage).toEqual({ usedBytes: 123_456, quotaBytes: 9_000_000 })
    expect((await memory.stats('p')).storage).toEqual({ usedBytes: 123_456, quotaBytes: 9_000_000 })
    expect(await memory.persist()).toBe(true)
    expect(persist).toHaveBeenCalledTimes(1)
    memory.close()
  })

  it('says whether the data is persistent, as navigator.storage.persisted() answers', async () => {
    let granted = false
    vi.stubGlobal('navigator', {
      storage: {
        estimate: async () => ({ usage: 10, quota: 100 }),
        persisted: async () => granted,
        persist: async () => (granted = true),
      },
    })
    const memory = await openTestMemory()
    expect((await memory.stats()).storage).toEqual({ usedBytes: 10, quotaBytes: 100, persisted: false })
    expect(await memory.persist()).toBe(true)
    expect((await memory.stats()).storage).toEqual({ usedBytes: 10, quotaBytes: 100, persisted: true })
    vi.stubGlobal('navigator', {
      storage: {
        estimate: async () => ({ usage: 10, quota: 100 }),
        persisted: async () => {
          throw new Error('refused')
        },
      },
    })
    expect((await memory.stats()).storage).toEqual({ usedBytes: 10, quotaBytes: 100 })
    memory.close()
  })

  it('leaves the estimate out and answers false without a storage manager, or when it refuses', async () => {
    vi.stubGlobal('navigator', undefined)
    const memory = await openTestMemory()
    expect((await memory.stats()).storage).toBeUndefined()
    expect(await memory.persist()).toBe(false)
    vi.stubGlobal('navigator', {
      storage: {
        estimate: async () => {
          throw new Error('opaque origin')
        },
        persist: async () => {
          throw new Error('denied')
        },
      },
    })
    expect((await memory.stats()).storage).toBeUndefined()
    expect(await memory.persist()).toBe(false)
    memory.close()
  })
})
