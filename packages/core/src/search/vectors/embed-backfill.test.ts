import { describe, expect, it, vi } from 'vitest'
import type { Embedder } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

/** A toy embedder whose model id is `model`: words hashed into 16 buckets, the hash seeded by the id (two models point texts different ways). */
function modelEmbedder(model: string | undefined, seed = 0): Embedder & { seen: string[] } {
  const seen: string[] = []
  const e: Embedder & { seen: string[] } = {
    dimensions: 16,
    seen,
    async embed(texts: string[]) {
      seen.push(...texts)
      return texts.map((text) => {
        const v = new Float32Array(16)
        for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          let h = seed
          for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0
          v[h % 16]! += 1
        }
        return v
      })
    },
  }
  if (model !== undefined) e.model = model
  return e
}

const waitFor = <T>(fn: () => Promise<T>) => vi.waitFor(fn, { timeout: 10_000, interval: 20 })

describe('embedder model and backfill', () => {
  it('embeds what a store held before it had an embedder', async () => {
    const first = await openTestMemory()
    await first.projects.create({ name: 'P', id: 'p1' })
    const s = await first.sessions.create('p1')
    for (let i = 0; i < 30; i++) await first.messages.appendExchange(s.id, `question ${i} about tides`, `answer ${i} about harbours`)
    await first.archive.create('p1', 'volcanic islands of the pacific')
    await first.close()
    const embedder = modelEmbedder('m1')
    const again = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, embedder })
    await waitFor(async () => expect(new Set(embedder.seen).size).toBe(61))
    await waitFor(async () =>
      expect((await again.search('p1', 'pacific volcanic', { mode: 'vector', kinds: ['passage'] }))[0]?.text).toBe('volcanic islands of the pacific'),
    )
    expect((await again.search('p1', 'tides', { mode: 'vector', limit: 100 })).length).toBe(61)
    await again.close()
  })

  it('re-embeds everything when the model changes, and nothing when it stays', async () => {
    const m1 = modelEmbedder('m1')
    const first = await openTestMemory({ embedder: m1 })
    await first.projects.create({ name: 'P', id: 'p1' })
    await first.archive.create('p1', 'lighthouse keeper diary')
    await first.archive.create('p1', 'orbital mechanics')
    await waitFor(async () => expect(await first.search('p1', 'lighthouse', { mode: 'vector' })).toHaveLength(2))
    await first.close()

    const same = modelEmbedder('m1')
    const reopened = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, embedder: same })
    // A marker written after the reopen is embedded, and is the only text this embedder saw.
    await reopened.archive.create('p1', 'marker text')
    await waitFor(async () => expect(same.seen).toContain('marker text'))
    expect(same.seen).toEqual(['marker text'])
    await reopened.close()

    const m2 = modelEmbedder('m2', 7)
    const changed = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, embedder: m2 })
    await waitFor(async () => expect([...m2.seen].sort()).toEqual(['lighthouse keeper diary', 'marker text', 'orbital mechanics']))
    await waitFor(async () => expect((await changed.search('p1', 'lighthouse keeper', { mode: 'vector' }))[0]?.text).toBe('lighthouse keeper diary'))
    await changed.close()
  })

  it('drops stored vectors of another length when the dimensions change', async () => {
    const first = await openTestMemory({ embedder: modelEmbedder(undefined) })
    await first.projects.create({ name: 'P', id: 'p1' })
    await first.archive.create('p1', 'glacier hiking boots')
    await waitFor(async () => expect(await first.search('p1', 'glacier', { mode: 'vector' })).toHaveLength(1))
    await first.close()
    const wide: Embedder & { seen: string[] } = {
      dimensions: 8,
      seen: [],
      async embed(texts) {
        wide.seen.push(...texts)
        return texts.map(() => Float32Array.from({ length: 8 }, (_, i) => i + 1))
      },
    }
    const again = await openTestMemory({ indexedDB: first.indexedDB, userId: first.userId, embedder: wide })
    await waitFor(async () => expect(wide.seen).toEqual(['glacier hiking boots']))
    await waitFor(async () => expect(await again.search('p1', 'anything', { mode: 'vector' })).toHaveLength(1))
    await again.close()
  })
})
