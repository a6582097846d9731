import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Embedder, Memory } from '@engram/core'
import { generateLongChats } from '../../../../../test/fixtures/long-chats.js'
import { loadFixture } from '../../../../../test/fixtures/recall-harness.js'

/** Seed and number of runs: FC_SEED replays one (or `random`), FC_RUNS sets how many. */
function runsOf(label: string, defaultRuns: number): { seed: number; numRuns: number } {
  const given = process.env.FC_SEED
  const seed = given === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(given ?? 20261204)
  const numRuns = Number(process.env.FC_RUNS ?? defaultRuns)
  console.log(`${label} seed: ${seed}, ${numRuns} runs (replay with FC_SEED=${seed})`)
  return { seed, numRuns }
}

/** A toy embedder: words hashed into 64 buckets. */
const hashEmbedder: Embedder = {
  dimensions: 64,
  model: 'test/hash-64',
  async embed(texts) {
    return texts.map((text) => {
      const v = new Float32Array(64)
      for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        let h = 0
        for (const c of w) h = (h * 31 + c.charCodeAt(0)) >>> 0
        v[h % 64]! += 1
      }
      return v
    })
  },
}

const WORDS = ['restaurant', 'trip', 'book', 'concert', 'bought', 'dinner', 'daughter', 'job', 'house', 'dog', 'read', 'live', 'weekend', 'sister', 'car']
const TIMES = ['', ' in May', ' last month', ' in March 2026', ' two weeks ago', ' last week', ' yesterday']

describe.each([
  ['text', undefined],
  ['hybrid', hashEmbedder],
] as const)('search ranking contract (property, %s)', (mode, embedder) => {
  let memory: Memory
  let questions: string[]
  beforeAll(async () => {
    const fixture = generateLongChats(41, 40)
    questions = fixture.facts.map((f) => f.question)
    memory = (await loadFixture(fixture, undefined, embedder ? { embedder } : {})).memory
  }, 120_000)
  afterAll(() => memory.close())

  it('a smaller limit returns a prefix of a larger one', async () => {
    const query = fc.oneof(
      fc.constantFrom(...questions),
      fc.tuple(fc.subarray(WORDS, { minLength: 1, maxLength: 4 }), fc.constantFrom(...TIMES)).map(([words, time]) => words.join(' ') + time),
    )
    const limits = fc.tuple(fc.integer({ min: 1, max: 150 }), fc.integer({ min: 1, max: 150 })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const)
    await fc.assert(
      fc.asyncProperty(query, limits, async (q, [small, large]) => {
        const few = await memory.search('fx', q, { limit: small, mode })
        const many = await memory.search('fx', q, { limit: large, mode })
        expect(few.map((h) => h.id)).toEqual(many.slice(0, few.length).map((h) => h.id))
        expect(few.length).toBe(Math.min(small, many.length))
        for (let i = 1; i < many.length; i++) expect(many[i]!.score).toBeLessThanOrEqual(many[i - 1]!.score)
      }),
      runsOf(`ranking prefix (${mode})`, 60),
    )
  }, 120_000)
})
