import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { KIND_CODES } from './index-rows.js'
import { decodeBlocks, MAX_TF, PostingWriter } from './posting-codec.js'

describe('posting codec', () => {
  it('round-trips every kind, tf and length; kinds 0–3 keep the first format’s bytes', () => {
    expect(KIND_CODES.length).toBeLessThanOrEqual(8)
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 100_000 }),
            tf: fc.integer({ min: 1, max: MAX_TF }),
            kind: fc.integer({ min: 0, max: KIND_CODES.length - 1 }),
            len: fc.integer({ min: 0, max: 1_000_000 }),
          }),
          { minLength: 1, maxLength: 50 },
        ),
        (postings) => {
          const w = new PostingWriter()
          let doc = 0
          for (const p of postings) w.add((doc += p.gap), p.tf, p.kind, p.len)
          const list = decodeBlocks([{ c: postings.length, p: w.finish() }])
          expect(list.count).toBe(postings.length)
          postings.forEach((p, i) => {
            expect([list.tfs[i], list.kinds[i], list.lens[i]]).toEqual([p.tf, p.kind, p.len])
          })
        },
      ),
      { seed: 31, numRuns: 200 },
    )
    // A posting of kind 0–3 is `tf × 4 + kind`, as the first format wrote it (stored blocks read as before).
    const old = new PostingWriter()
    old.add(5, 3, 2, 7)
    expect([...old.finish()]).toEqual([5, 3 * 4 + 2, 7])
  })

  it('keeps the code of every stored kind when one is added (observations are 6, past the knowledge kinds)', () => {
    expect(KIND_CODES).toEqual(['message', 'fact', 'summary', 'passage', 'entity', 'relation', 'observation'])
    const w = new PostingWriter()
    w.add(9, MAX_TF, KIND_CODES.indexOf('observation'), 12)
    const list = decodeBlocks([{ c: 1, p: w.finish() }])
    expect([list.docs[0], list.tfs[0], KIND_CODES[list.kinds[0]!], list.lens[0]]).toEqual([9, MAX_TF, 'observation', 12])
  })
})
