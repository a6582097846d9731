import { describe, expect, it } from 'vitest'
import type { Candidate } from './bm25.js'
import { fuseScores } from './fusion.js'

const c = (docId: string, score: number, at = 0): Candidate => ({ docId, kind: 'message', at, score })

describe('fuseScores', () => {
  it('keeps the text scale: a text hit gains at most weight × the best text score', () => {
    const fused = fuseScores([c('a', 10), c('b', 6)], [c('b', 0.9), c('a', 0.5), c('x', 0.1)], 10, 0.5)
    expect(fused.map((f) => [f.docId, f.score])).toEqual([
      ['a', 10 + 0.5 * 10 * ((0.5 - 0.1) / 0.8)],
      ['b', 6 + 0.5 * 10],
      ['x', 0],
    ])
  })

  it('ranks a candidate only the vector list found by its similarity alone', () => {
    const fused = fuseScores([c('a', 4)], [c('v', 0.8), c('w', 0.4), c('a', 0.2)], 10, 1)
    expect(fused.map((f) => f.docId)).toEqual(['a', 'v', 'w'])
    expect(fused[1]!.score).toBeCloseTo(4)
  })

  it('returns the best k, equal scores newest first', () => {
    const fused = fuseScores([c('old', 2, 1), c('new', 2, 5)], [], 1)
    expect(fused.map((f) => f.docId)).toEqual(['new'])
  })
})
