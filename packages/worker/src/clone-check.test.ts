import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import * as Comlink from 'comlink'
import { describe, expect, it } from 'vitest'
import { MemoryError } from '@engram/core'
import { connectMemory, exposeMemory } from '@engram/worker'
import { findUncloneable } from './uncloneable.js'

let counter = 0

/** A client connected to a host over a Node MessageChannel (fake-indexeddb). */
async function connected() {
  const channel = new MessageChannel()
  exposeMemory({ endpoint: channel.port1, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
  return connectMemory(channel.port2, { appId: 'clone-check', userId: `u${++counter}` })
}

async function failure(call: Promise<unknown>): Promise<MemoryError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(MemoryError)
  return error as MemoryError
}

describe('values that cannot cross postMessage', () => {
  it('a function inside a value is invalid_input naming the method, the argument and the field, and nothing is written', async () => {
    const memory = await connected()
    try {
      const error = await failure(memory.facts.set('user', 'prefs', { theme: 'dark', onChange: () => {} } as never))
      expect(error.code).toBe('invalid_input')
      expect(error.message).toMatch(/^facts\.set: argument 3 field onChange is a function, which cannot be sent to the worker/)
      expect(await memory.facts.get('user', 'prefs')).toBeUndefined()
    } finally {
      await memory.close()
    }
  })

  it('a symbol in an option array, a function as an argument, a Promise in a top-level call: each named', async () => {
    const memory = await connected()
    try {
      const tags = await failure(memory.facts.set('user', 'k', 1, { tags: ['ok', Symbol('x') as unknown as string] }))
      expect([tags.code, tags.message]).toEqual(['invalid_input', expect.stringMatching(/^facts\.set: argument 4 field tags\[1\] is a symbol/)])
      const query = await failure(memory.search('user', (() => 'teal') as unknown as string))
      expect([query.code, query.message]).toEqual(['invalid_input', expect.stringMatching(/^search: argument 2 is a function/)])
      const nested = await failure(memory.projects.create({ name: 'P', meta: { later: Promise.resolve(1) } } as never))
      expect(nested.message).toMatch(/^projects\.create: argument 1 field meta\.later is a Promise/)
      // The connection is fine afterwards, and listeners still go over as proxies.
      const off = await memory.changes.subscribe({}, () => {})
      await memory.facts.set('user', 'k', { list: [1, 'a'], nested: { ok: true } }, { tags: ['ok'] })
      expect((await memory.facts.get('user', 'k'))?.value).toEqual({ list: [1, 'a'], nested: { ok: true } })
      await off()
    } finally {
      await memory.close()
    }
  })
})

describe('findUncloneable', () => {
  it('walks objects, arrays, Maps and Sets once (cycles included) and names the path', () => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle.self = cycle
    expect(findUncloneable(cycle)).toBeUndefined()
    expect(findUncloneable({ list: [1, { deep: new Map([['k', () => 1]]) }] })).toEqual(['list[1].deep.get(k)', 'a function'])
    expect(findUncloneable(new Set([Symbol.iterator]))).toEqual(['<item>', 'a symbol'])
    expect(findUncloneable({ weak: new WeakMap() })).toEqual(['weak', 'a WeakMap'])
    expect(findUncloneable([new Date(), new Float32Array(2), new ArrayBuffer(1), /x/, new Error('e'), null, undefined, 1n])).toBeUndefined()
    // Comlink sends a proxy given as an argument, not one inside a value.
    expect(findUncloneable({ listener: Comlink.proxy(() => 1) })).toEqual(['listener', 'a function'])
  })
})
