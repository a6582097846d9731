import { describe, expect, it, vi } from 'vitest'
import type { Embedder } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

/** A toy embedder: words hashed into 32 buckets (texts sharing words point the same way). */
function hashEmbedder(options: { failFirst?: number } = {}): Embedder & { calls: number } {
  let failures = options.failFirst ?? 0
  const e = {
    dimensions: 32,
    calls: 0,
    async embed(texts: string[]) {
      e.calls++
      if (failures-- > 0) throw new Error('model offline')
      return texts.map((text) => {
        const v = new Float32Array(32)
        for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          let h = 0
          for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0
          v[h % 32]! += 1
        }
        return v
      })
    },
  }
  return e
}

const waitFor = <T>(fn: () => Promise<T>) => vi.waitFor(fn, { timeout: 5000, interval: 20 })

describe('vector and hybrid search', () => {
  it('embeds passages and messages off the write path and finds them by vector', async () => {
    const embedder = hashEmbedder()
    const memory = await openTestMemory({ embedder })
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.archive.create('p1', 'orbital mechanics of satellites')
    const s = await memory.sessions.create('p1')
    await memory.messages.appendExchange(s.id, 'tell me about sourdough bread', 'sourdough needs a starter')
    await waitFor(async () => expect((await memory.search('p1', 'sourdough starter', { mode: 'vector' }))[0]?.kind).toBe('message'))
    const hits = await memory.search('p1', 'satellites orbital', { mode: 'vector', kinds: ['passage'] })
    expect(hits[0]?.text).toBe('orbital mechanics of satellites')
    // hybrid is the default with an embedder and fuses both lists
    expect((await memory.search('p1', 'satellites'))[0]?.text).toBe('orbital mechanics of satellites')
    await memory.close()
  })

  it('retries a failing embedder without failing or losing the write', async () => {
    const embedder = hashEmbedder({ failFirst: 2 })
    const memory = await openTestMemory({ embedder })
    await memory.projects.create({ name: 'P', id: 'p1' })
    const passage = await memory.archive.create('p1', 'glacier hiking boots')
    expect(passage.text).toBe('glacier hiking boots')
    await waitFor(async () => expect(embedder.calls).toBeGreaterThanOrEqual(3))
    await waitFor(async () => expect(await memory.search('p1', 'glacier boots', { mode: 'vector' })).toHaveLength(1))
    await memory.close()
  })

  it('keeps the queue across a restart and drains it on open', async () => {
    const never: Embedder = { dimensions: 32, embed: () => new Promise<Float32Array[]>(() => {}) }
    const first = await openTestMemory({ embedder: never })
    await first.projects.create({ name: 'P', id: 'p1' })
    await first.archive.create('p1', 'volcanic islands of the pacific')
    await first.close()
    const again = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, embedder: hashEmbedder() })
    await waitFor(async () => expect((await again.search('p1', 'pacific volcanic', { mode: 'vector' }))[0]?.text).toBe('volcanic islands of the pacific'))
    await again.close()
  })

  it('embeds a query once however often it is searched, and not at all for a short keyword lookup', async () => {
    const embedder = hashEmbedder()
    const memory = await openTestMemory({ embedder })
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.archive.create('p1', 'glacier hiking boots')
    await waitFor(async () => expect(await memory.search('p1', 'glacier', { mode: 'vector' })).toHaveLength(1))
    const before = embedder.calls
    await memory.search('p1', 'where are my glacier boots?')
    await memory.search('p1', 'where are my glacier boots?', { limit: 50 })
    expect(embedder.calls).toBe(before + 1)
    await memory.search('p1', 'glacier boots')
    expect(embedder.calls).toBe(before + 1)
    await memory.close()
  })

  it('drops the vector of a removed passage', async () => {
    const memory = await openTestMemory({ embedder: hashEmbedder() })
    await memory.projects.create({ name: 'P', id: 'p1' })
    const p = await memory.archive.create('p1', 'lighthouse keeper diary')
    await waitFor(async () => expect(await memory.search('p1', 'lighthouse', { mode: 'vector' })).toHaveLength(1))
    await memory.archive.delete(p.id)
    expect(await memory.search('p1', 'lighthouse', { mode: 'vector' })).toEqual([])
    await memory.close()
  })
})
