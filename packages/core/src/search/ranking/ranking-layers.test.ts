import { describe, expect, it } from 'vitest'
import { englishAnalyzer } from '@engram/core'
import { openTestMemory, testClock } from '../../../../../test/support/memory.js'
import { proximityShare } from './proximity.js'
import { variantTerms } from '../analysis/word-variants.js'

async function store(texts: readonly string[]) {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p1' })
  const s = await memory.sessions.create('p1')
  for (const content of texts) {
    clock.advance(1000)
    await memory.messages.append(s.id, { role: 'user', content })
  }
  return memory
}

describe('ranking above BM25', () => {
  it('derives other word forms of the query words, which the stemmer keeps apart', () => {
    const stems = (w: string) => englishAnalyzer.terms(w)
    const variants = variantTerms(englishAnalyzer, 'What nut allergy do I have?', new Set(stems('What nut allergy do I have?')))
    expect(variants).toContain(stems('allergic')[0])
    expect(variants).not.toContain(stems('allergy')[0])
    expect(variantTerms(englishAnalyzer, 'a cat', new Set())).toEqual([])
  })

  it('adds the other forms of irregular verbs and of short verbs in -y, which the stemmer keeps apart', () => {
    const stems = (w: string) => englishAnalyzer.terms(w)
    const terms = (q: string) => variantTerms(englishAnalyzer, q, new Set(stems(q)))
    expect(terms('What did Nadia buy?')).toContain(stems('bought')[0])
    expect(terms('Where did they go?')).toEqual(expect.arrayContaining([stems('went')[0], stems('gone')[0]]))
    expect(terms('Who ran the race?')).toContain(stems('run')[0])
    expect(terms('Which place did we try?')).toContain(stems('tried')[0])
    // Forms that are stop words ("did", "was") are never searched.
    expect(terms('What was it?')).toEqual([])
  })

  it('finds the past tense of an irregular verb the query asks in the present', async () => {
    const memory = await store(['I bought a telescope at the fair.', 'The fair was loud and crowded.', 'The telescope lens is dusty.'])
    const hits = await memory.search('p1', 'what did I buy at the fair')
    expect(hits[0]!.text).toBe('I bought a telescope at the fair.')
    await memory.close()
  })

  it('finds a derived form, and an exact match still ranks first', async () => {
    const memory = await store([
      'I am allergic to cashews, even a small amount.',
      'The allergy clinic moved to Elm Street.',
      'We had nuts and cake at the party.',
      'Nothing else happened today.',
    ])
    const derived = await memory.search('p1', 'what allergy do I have')
    expect(derived.map((h) => h.text)).toContain('I am allergic to cashews, even a small amount.')
    const exact = await memory.search('p1', 'allergy clinic')
    expect(exact[0]!.text).toBe('The allergy clinic moved to Elm Street.')
    await memory.close()
  })

  it('ranks query terms side by side above the same terms apart', async () => {
    expect(proximityShare(englishAnalyzer, englishAnalyzer.terms('blue folder'), 'the passport is in the blue folder')).toBe(1)
    expect(proximityShare(englishAnalyzer, englishAnalyzer.terms('blue folder'), 'blue skies today, and later I found the old folder in a box')).toBe(0)
    // Same terms, same length: BM25 ties (newest first), so only proximity puts the older one first.
    const memory = await store(['passport: the blue folder, found it later today', 'blue skies today, later I found the folder'])
    const hits = await memory.search('p1', 'blue folder')
    expect(hits[0]!.text).toBe('passport: the blue folder, found it later today')
    await memory.close()
  })

  it('lets the turn two after a hit (the answer after a follow-up question) in, below the reply', async () => {
    const memory = await store([
      'Groceries again, and the weather turned.',
      'We put an offer on a house today.',
      'Exciting, where is it?',
      'In Haarlem, a narrow brick one by the canal.',
      'Unrelated: the cat knocked over a plant.',
    ])
    const hits = await memory.search('p1', 'offer on a house', { limit: 5 })
    const score = (text: string) => hits.find((h) => h.text === text)?.score ?? 0
    expect(hits[0]!.text).toBe('We put an offer on a house today.')
    expect(score('In Haarlem, a narrow brick one by the canal.')).toBeGreaterThan(0)
    expect(score('Exciting, where is it?')).toBeGreaterThan(score('In Haarlem, a narrow brick one by the canal.'))
    expect(score('Unrelated: the cat knocked over a plant.')).toBe(0)
    await memory.close()
  })
})
