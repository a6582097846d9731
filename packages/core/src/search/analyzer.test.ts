import { describe, expect, it } from 'vitest'
import { createAnalyzer, englishAnalyzer, foldText } from '@engram/core'
import { porterStem } from './porter-stemmer.js'
import { openTestMemory } from '../../../../test/support/memory.js'

describe('analyzer', () => {
  it('folds case and diacritics, drops stop words and stems', () => {
    expect(foldText('Crème BRÛLÉE Ångström')).toBe('creme brulee angstrom')
    expect(englishAnalyzer.terms('What did I say about the Running shoes?')).toEqual(['sai', 'run', 'shoe'])
    expect(englishAnalyzer.terms('café 42 x2')).toEqual(['cafe', '42', 'x2'])
    expect(englishAnalyzer.terms('東京タワー')).toEqual(expect.arrayContaining(['東', '京']))
  })

  it('stems like Porter', () => {
    const cases: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      cats: 'cat',
      agreed: 'agre',
      plastered: 'plaster',
      motoring: 'motor',
      hopping: 'hop',
      filing: 'file',
      happy: 'happi',
      relational: 'relat',
      conditional: 'condit',
      hopeful: 'hope',
      adjustment: 'adjust',
      generalization: 'gener',
      moved: 'move',
      moving: 'move',
    }
    for (const [word, stem] of Object.entries(cases)) expect([word, porterStem(word)]).toEqual([word, stem])
  })

  it('is swappable per language through openMemory', async () => {
    const french = createAnalyzer({ stopWords: new Set(['le', 'la', 'les', 'de']), stem: (w) => w.replace(/s$/, '') })
    const memory = await openTestMemory({ analyzer: french })
    await memory.projects.create({ name: 'P', id: 'p1' })
    await memory.archive.create('p1', 'Les chats de la voisine')
    expect(await memory.search('p1', 'chat')).toHaveLength(1)
    expect(await memory.search('p1', 'la')).toEqual([])
    await memory.close()
  })
})
