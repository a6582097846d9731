import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'

/** A tiny deterministic generator (no Math.random: failures replay). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

describe('BM25 ranking over blocks and the tail', () => {
  /** Random corpora of common, middle and rare words; the top k must match a full scoring (limit above the corpus). */
  async function checkAgainstFullScoring(seed: number, options: Record<string, unknown>, maxWords = 10, shortQueries = false) {
    const rand = lcg(seed)
    const memory = await openTestMemory(options)
    await memory.projects.create({ name: 'P', id: 'p1' })
    const session = await memory.sessions.create('p1')
    // Common words (in most messages), a middle band, and rare words, some repeated in one message.
    const common = ['alpha', 'bravo']
    const middle = Array.from({ length: 12 }, (_, i) => `middl${String.fromCharCode(97 + i)}x`)
    const rare = Array.from({ length: 8 }, (_, i) => `rar${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}q`)
    const pick = (list: string[]) => list[Math.floor(rand() * list.length)]!
    const texts: string[] = []
    for (let i = 0; i < 240; i++) {
      const words: string[] = []
      const n = 3 + Math.floor(rand() * maxWords)
      for (let j = 0; j < n; j++) words.push(rand() < 0.5 ? pick(common) : rand() < 0.7 ? pick(middle) : pick(rare))
      texts.push(words.join(' '))
    }
    for (let i = 0; i < texts.length; i += 2) await memory.messages.appendExchange(session.id, texts[i]!, texts[i + 1]!)
    for (let q = 0; q < 30; q++) {
      const query = shortQueries
        ? [pick(rare), rand() < 0.7 ? pick(middle) : pick(common)].join(' ')
        : [pick(common), pick(middle), pick(rare), rand() < 0.5 ? pick(common) : pick(rare)].join(' ')
      const k = 1 + Math.floor(rand() * (shortQueries ? 60 : 8))
      const full = await memory.search('p1', query, { limit: 1000 }) // depth above the corpus: every list read whole
      const top = await memory.search('p1', query, { limit: k })
      expect(
        top.map((h) => h.id),
        `seed ${seed}, query "${query}", k ${k}`,
      ).toEqual(full.slice(0, k).map((h) => h.id))
      for (let i = 0; i < top.length; i++) expect(top[i]!.score).toBeCloseTo(full[i]!.score, 9)
    }
    await memory.close()
  }

  it('ranks the top k exactly as scoring every posting list in full would', async () => {
    await checkAgainstFullScoring(Number(process.env.MAXSCORE_SEED ?? 7), {})
  })

  it('ranks the top k exactly with long documents, merged after every write or never', async () => {
    const seed = Number(process.env.MAXSCORE_SEED ?? 11)
    await checkAgainstFullScoring(seed, { mergeAt: 1, mergeDelayMs: 0 }, 80)
    await checkAgainstFullScoring(seed + 1, { mergeAt: Infinity, mergeDelayMs: Infinity }, 40)
    await checkAgainstFullScoring(seed + 2, { mergeAt: 1, mergeDelayMs: 0 }, 80, true)
  })

  it('keeps corpus statistics exact across batched, replaced and removed documents', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    const a = await memory.archive.create('p1', 'kiwi kiwi mango')
    await memory.archive.create('p1', 'mango papaya')
    const before = await memory.search('p1', 'kiwi')
    expect(before.map((h) => h.id)).toEqual([a.id])
    await memory.archive.delete(a.id)
    expect(await memory.search('p1', 'kiwi')).toEqual([])
    expect((await memory.search('p1', 'mango')).map((h) => h.text)).toEqual(['mango papaya'])
    await memory.close()
  })
})

describe('index calls inside one long transaction', () => {
  it('keeps the transaction when an import indexes hundreds of rows with the index on or off', async () => {
    for (const textIndex of [true, false]) {
      const source = await openTestMemory()
      await source.projects.create({ name: 'P', id: 'p1' })
      for (let i = 0; i < 150; i++) await source.facts.set('p1', `k${i}`, `value number ${i}`)
      const s = await source.sessions.create('p1')
      for (let i = 0; i < 150; i++) await source.messages.appendExchange(s.id, `question ${i}`, `answer ${i}`)
      const dump = await source.export()
      await source.close()
      const target = await openTestMemory({ textIndex } as Record<string, unknown>)
      await target.import(dump, { mode: 'merge' })
      expect((await target.facts.list('p1', { limit: 1000 })).items).toHaveLength(150)
      if (textIndex) expect((await target.search('p1', 'answer 149')).length).toBeGreaterThan(0)
      await target.close()
    }
  })
})
