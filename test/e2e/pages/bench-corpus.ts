/**
 * The corpus of the browser benchmarks: English-like conversation turns made
 * from a seed (user turns of 8–30 words, assistant turns of 30–110; everyday
 * words, a Zipf-distributed long tail of names and rare words, numbers), and
 * queries of 2–4 content words. Nothing large is checked in.
 */
import { seededRandom } from '../../fixtures/conversations.js'

const FUNCTION_WORDS =
  'the a an and or but of to in on at for with about from by as is are was were be been it this that these those i you we they he she my your our their me us them not no so if then than too very just also can could would should will do does did have has had there here what which who when where why how all some any more most other such only own same into over after before again once'.split(
    ' ',
  )
const CONTENT_WORDS = (
  'project meeting dinner travel budget garden recipe flight hotel doctor school music movie weather coffee train office email report design ' +
  'deadline manager team apartment rent landlord repair plumber balcony dog cat walk vet park kids teacher piano lesson practice book novel author film ' +
  'concert album gym swim bike training marathon coach city museum beach airport luggage kitchen oven garlic soup bread pasta spice tomato basil ' +
  'passport folder drawer desk car insurance bank account payment invoice contract client release deploy server database query index cache memory ' +
  'question answer idea plan list note reminder schedule week month year morning evening weekend holiday birthday anniversary wedding sister brother ' +
  'mother father friend neighbour colleague family child daughter son grandmother uncle aunt cousin river mountain lake forest island bridge station'
).split(' ')
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'ta', 'vo', 'shi', 'pa', 'dor', 'el', 'un', 'ri', 'sa', 'to', 'ber', 'qui', 'na', 'zel']

/** The corpus: turn texts in order, and queries. */
export interface BenchCorpus {
  texts: string[]
  queries: string[]
}

/** Generates `n` turns and `queries` queries from `seed`. */
export function makeCorpus(n: number, queries: number, seed = 42): BenchCorpus {
  const rand = seededRandom(seed)
  const rare = new Set<string>()
  while (rare.size < 20_000) {
    let w = ''
    const k = 2 + Math.floor(rand() * 3)
    for (let i = 0; i < k; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)]
    rare.add(w)
  }
  const vocabulary = [...CONTENT_WORDS, ...rare]
  const cumulative: number[] = []
  let sum = 0
  for (let i = 0; i < vocabulary.length; i++) cumulative.push((sum += 1 / (i + 1)))
  const pick = (): string => {
    const x = rand() * sum
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return vocabulary[lo]!
  }
  const sentence = (words: number): string => {
    const out: string[] = []
    for (let i = 0; i < words; i++) {
      const r = rand()
      out.push(r < 0.45 ? FUNCTION_WORDS[Math.floor(rand() * FUNCTION_WORDS.length)]! : r < 0.47 ? String(Math.floor(rand() * 2000)) : pick())
    }
    const text = out.join(' ')
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
  }
  const texts: string[] = []
  for (let i = 0; i < n; i++) {
    const words = i % 2 === 0 ? 8 + Math.floor(rand() * 23) : 30 + Math.floor(rand() * 81)
    const parts: string[] = []
    for (let left = words; left > 0; ) {
      const k = Math.min(left, 6 + Math.floor(rand() * 12))
      parts.push(sentence(k))
      left -= k
    }
    texts.push(parts.join(' '))
  }
  const qs: string[] = []
  for (let i = 0; i < queries; i++) qs.push(Array.from({ length: 2 + Math.floor(rand() * 3) }, pick).join(' '))
  return { texts, queries: qs }
}
