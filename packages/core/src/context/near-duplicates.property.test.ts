import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Hit } from '../search/types.js'
import { NEAR_DUPLICATE, NearDuplicates } from './recall-plan.js'

/*
 * NearDuplicates compares a record only with the admitted records that share
 * a word of its prefix. Against a plain model that compares it with every
 * admitted record (Jaccard of the word sets ≥ NEAR_DUPLICATE), it admits
 * exactly the same records, in texts that are new or edits of earlier ones, so
 * that near-duplicates of every degree, copies and empty texts are common. Prints its
 * seed; replay with FC_SEED=<seed> (FC_RUNS for more runs).
 */

const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
const numRuns = Number(process.env.FC_RUNS ?? 200)

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1
  let shared = 0
  for (const w of a) if (b.has(w)) shared++
  return shared / (a.size + b.size - shared)
}

const hit = (text: string, i: number): Hit => ({ kind: 'message', id: `m${i}`, projectId: 'p', text, score: 1, createdAt: i })
const vocabulary = 'a the of Tea tea kettle boil water é über 42 nine x-ray 猫 cat dog blue green morning evening seven eight window garden sleeps'.split(' ')
const word = fc.constantFrom(...vocabulary)
/** Each text is new, or an earlier one with a few words dropped and a few added: near-duplicates of every degree. */
const step = fc.record({
  from: fc.nat(),
  drop: fc.array(fc.nat(), { maxLength: 3 }),
  add: fc.array(word, { maxLength: 3 }),
  fresh: fc.array(word, { maxLength: 16 }),
})
const texts = fc.array(step, { maxLength: 40 }).map((steps) => {
  const out: string[][] = []
  for (const s of steps) {
    if (out.length === 0 || s.from % 3 === 0) out.push(s.fresh)
    else {
      const base = [...out[s.from % out.length]!]
      for (const d of s.drop) if (base.length > 0) base.splice(d % base.length, 1)
      out.push([...base, ...s.add])
    }
  }
  return out.map((words) => words.join(' '))
})

describe('NearDuplicates', () => {
  it(`admits what a comparison with every admitted record admits (seed ${seed})`, () => {
    fc.assert(
      fc.property(texts, (texts) => {
        const seen = new NearDuplicates()
        const admitted: Set<string>[] = []
        for (const [i, t] of texts.entries()) {
          const words = wordsOf(t)
          const expected = !admitted.some((other) => jaccard(other, words) >= NEAR_DUPLICATE)
          if (expected) admitted.push(words)
          expect(seen.admit(hit(t, i)), JSON.stringify(texts.slice(0, i + 1))).toBe(expected)
        }
      }),
      { seed, numRuns },
    )
  })

  it('drops a reworded copy with one word changed in ten, and keeps a different text', () => {
    const seen = new NearDuplicates()
    expect(seen.admit(hit('we boil the water for tea in the blue kettle every morning at seven', 0))).toBe(true)
    expect(seen.admit(hit('We boil the water for tea in the blue kettle every morning at eight', 1))).toBe(false)
    expect(seen.admit(hit('the cat sleeps on the warm kettle', 2))).toBe(true)
    expect(seen.admit(hit('', 3))).toBe(true)
    expect(seen.admit(hit('...', 4))).toBe(false)
  })
})
