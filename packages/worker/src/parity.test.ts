import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { MemoryError, openMemory, type Memory } from '@engram/core'
import { connectMemory, exposeMemory } from '@engram/worker'

let counter = 0

/** The same store, opened in process and reached through a worker host over a MessageChannel. */
const opens: [string, () => Promise<Memory>][] = [
  ['in process', () => openMemory({ appId: 'parity', userId: `u${++counter}`, indexedDB: new IDBFactory(), IDBKeyRange })],
  [
    'through a worker',
    async () => {
      const { port1, port2 } = new MessageChannel()
      exposeMemory({ endpoint: port1, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
      return connectMemory(port2, { appId: 'parity', userId: `u${++counter}` })
    },
  ],
]

describe.each(opens)('memory.status and memory.sync %s', (where, open) => {
  it('start with nothing running and no problems', async () => {
    const memory = await open()
    expect(memory.mode).toBe(where === 'in process' ? 'local' : 'port')
    expect(await memory.status.get()).toEqual({
      embedder: { state: 'off' },
      summarizer: { state: 'off' },
      extractor: { state: 'off' },
      sync: { state: 'off', projects: {} },
      problems: [],
      warnings: [],
    })
    expect(await memory.sync.status('user')).toBe('off')
    expect(await memory.sync.isLeader()).toBe(false)
    await expect(memory.sync.flush()).resolves.toBeUndefined()
    await expect(memory.sync.whenSynced('user')).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.close()
  })

  it('refuse a listener that is not a function with invalid_input', async () => {
    const memory = await open()
    for (const subscribe of [
      () => memory.status.subscribe('x' as never),
      () => memory.sync.onStatus(null as never),
      () => memory.sync.onLeaderChange(42 as never),
      () => memory.changes.subscribe({}, undefined as never),
    ]) {
      const error = await subscribe().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(MemoryError)
      expect(error).toMatchObject({ code: 'invalid_input' })
    }
    await memory.close()
  })

  it('unsubscribe resolves, and calling it twice is harmless', async () => {
    const memory = await open()
    const offs = [await memory.status.subscribe(() => {}), await memory.sync.onStatus(() => {}), await memory.sync.onLeaderChange(() => {})]
    for (const off of offs) {
      await expect(off()).resolves.toBeUndefined()
      await expect(off()).resolves.toBeUndefined()
    }
    await memory.close()
  })

  it('fail with closed after close()', async () => {
    const memory = await open()
    await memory.close()
    await memory.close()
    expect(memory.closed).toBe(true)
    for (const call of [
      () => memory.status.get(),
      () => memory.status.subscribe(() => {}),
      () => memory.sync.status('user'),
      () => memory.sync.isLeader(),
      () => memory.changes.subscribe({}, () => {}),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'closed' })
    }
  })

  it('refuse a bad project id in sync.status with invalid_input', async () => {
    const memory = await open()
    try {
      await expect(memory.sync.status('')).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.sync.status(42 as never)).rejects.toMatchObject({ code: 'invalid_input' })
    } finally {
      await memory.close()
    }
  })
})
