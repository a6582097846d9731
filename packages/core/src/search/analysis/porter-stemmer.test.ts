import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { porterStem } from './porter-stemmer.js'

/**
 * Martin Porter's published test vocabulary (23,531 words and their stems,
 * voc.txt / output.txt of the reference implementation), as shipped in the
 * porter-stemmer package's test folder.
 */
function vocabulary(): Array<[string, string]> {
  const dir = join(dirname(createRequire(import.meta.url).resolve('porter-stemmer/package.json')), 'test')
  const lines = (file: string) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
  const words = lines('input.txt')
  const stems = lines('output.txt')
  expect(words.length).toBe(stems.length)
  return words.map((w, i) => [w, stems[i]!])
}

describe('porterStem', () => {
  it('stems every word of the published Porter vocabulary as the reference implementation does', () => {
    const pairs = vocabulary()
    expect(pairs.length).toBeGreaterThan(23_000)
    const wrong = pairs.filter(([word, stem]) => porterStem(word) !== stem).map(([word, stem]) => `${word} → ${porterStem(word)} (expected ${stem})`)
    expect(wrong.slice(0, 20)).toEqual([])
  })
})
