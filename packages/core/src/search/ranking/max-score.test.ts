import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'
import { canStopAdding, gallop, kthLargest } from './max-score.js'

/** A tiny deterministic generator (no Math.random: failures replay with the printed seed). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

describe('max-score helpers', () => {
  it('finds the k-th largest value without reordering the input', () => {
    const rand = lcg(3)
    for (let round = 0; round < 50; round++) {
      const n = 1 + Math.floor(rand() * 200)
      const values = Float64Array.from({ length: n }, () => Math.floor(rand() * 20) / 4) // many ties
      const copy = values.slice()
      const sorted = [...values].sort((a, b) => b - a)
      const k = 1 + Math.floor(rand() * n)
      expect(kthLargest(values, n, k), `round ${round}`).toBe(sorted[k - 1])
      expect(values).toEqual(copy)
    }
  })

  it('stops adding documents only when the bound is below the k-th partial score', () => {
    const partial = Float64Array.from([5, 4, 3, 2, 1])
    expect(canStopAdding(partial, 5, 3, 2.9)).toBe(true)
    expect(canStopAdding(partial, 5, 3, 3)).toBe(false) // a tie could still enter
    expect(canStopAdding(partial, 5, 6, 0)).toBe(false) // fewer scored than needed
  })

  it('gallops to the first document at or above a number', () => {
    const docs = Uint32Array.from([2, 4, 4, 9, 15, 16, 30, 31, 40])
    for (let from = 0; from < docs.length; from++) {
      for (let n = 0; n < 45; n++) {
        let expected = from
        while (expected < docs.length && docs[expected]! < n) expected++
        expect(gallop(docs, from, docs.length, n), `from ${from}, n ${n}`).toBe(expected)
      }
    }
    expect(gallop(docs, 0, 4, 100)).toBe(4)
  })
})

describe('BM25 with early termination', () => {
  it('returns the same hits, scores and order as ranking every document', async () => {
    const seed = Number(process.env.MAXSCORE_SEED ?? 11)
    const rand = lcg(seed)
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    const session = await memory.sessions.create('p1')
    // Two words in nearly every message, a band in some, rare words in a few: the rare lists come first and
    // fill the top, the long lists then only add to what they found.
    const common = ['alpha', 'bravo']
    const middle = Array.from({ length: 6 }, (_, i) => `middl${String.fromCharCode(97 + i)}x`)
    const rare = Array.from({ length: 30 }, (_, i) => `rar${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}q`)
    const pick = (list: string[]) => list[Math.floor(rand() * list.length)]!
    const messages = Array.from({ length: 1600 }, () => {
      const words = [pick(common), pick(common)]
      const n = 2 + Math.floor(rand() * 12)
      for (let j = 0; j < n; j++) words.push(rand() < 0.6 ? pick(common) : rand() < 0.8 ? pick(middle) : pick(rare))
      return { role: 'user' as const, content: words.join(' ') }
    })
    // Merged as one bulk write (blocks), then a tail of unmerged messages on top.
    await memory.messages.appendMany(session.id, messages.slice(0, 1500))
    for (const m of messages.slice(1500)) await memory.messages.append(session.id, m)
    for (let q = 0; q < 25; q++) {
      const query = [pick(rare), pick(common), rand() < 0.5 ? pick(middle) : pick(common)].join(' ')
      const limit = 1 + Math.floor(rand() * 20)
      const pruned = await memory.search('p1', query, { limit, mode: 'text' })
      // Every message is in this session: the session filter changes no hit, and ranks every document.
      const every = await memory.search('p1', query, { limit, mode: 'text', sessionId: session.id })
      expect(
        pruned.map((h) => h.id),
        `seed ${seed}, query "${query}", limit ${limit}`,
      ).toEqual(every.map((h) => h.id))
      expect(pruned.map((h) => h.score)).toEqual(every.map((h) => h.score))
    }
    await memory.close()
  })
})
