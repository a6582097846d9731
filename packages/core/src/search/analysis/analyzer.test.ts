import { describe, expect, it } from 'vitest'
import { createAnalyzer, englishAnalyzer, foldText } from '@engram/core'
import { openTestMemory } from '../../../../../test/support/memory.js'

describe('analyzer', () => {
  it('folds case and diacritics, drops stop words and stems', () => {
    expect(foldText('Crème BRÛLÉE Ångström')).toBe('creme brulee angstrom')
    expect(englishAnalyzer.terms('What did I say about the Running shoes?')).toEqual(['sai', 'run', 'shoe'])
    expect(englishAnalyzer.terms('café 42 x2')).toEqual(['cafe', '42', 'x2'])
    expect(englishAnalyzer.terms("Don't panic: 3.5 kg")).toEqual(['panic', '3', '5', 'kg'])
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

/**
 * One real sentence per script: the analyzer finds its words, and a search
 * for a word finds the sentence that has it and not one that only shares
 * characters with it (as splitting into characters or dropping vowel signs did).
 */
describe.each([
  { script: 'Chinese', text: '我喜欢在北京吃烤鸭。', word: '北京', words: ['我', '喜欢', '在', '北京', '吃', '烤鸭'], sharesCharacters: '京剧的演员很有名。' },
  { script: 'Japanese', text: '昨日は東京で寿司を食べました。', word: '寿司', words: ['東京', '寿司'], sharesCharacters: '司会者が会場に来ました。' },
  { script: 'Thai', text: 'ฉันชอบกินข้าวผัดกับไข่ดาว', word: 'ข้าวผัด', words: ['ฉัน', 'ชอบ', 'กิน'], sharesCharacters: 'แมวชอบนอนบนโซฟา' },
  { script: 'Hindi', text: 'मुझे हिन्दी में किताबें पढ़ना पसंद है।', word: 'हिन्दी', words: ['मुझे', 'हिन्दी', 'किताबें', 'पसंद'], sharesCharacters: 'हिरन नदी के पास दौड़ता है।' },
  {
    script: 'Korean',
    text: '저는 서울에서 한국어를 공부합니다.',
    word: '서울에서',
    words: ['저는', '서울에서', '한국어를', '공부합니다'],
    sharesCharacters: '울산은 바다가 아름답습니다.',
  },
  {
    script: 'Russian',
    text: 'Я люблю читать книги по вечерам.',
    word: 'книги',
    words: ['люблю', 'читать', 'книги', 'по', 'вечерам'],
    sharesCharacters: 'Книжный магазин закрыт.',
  },
  { script: 'Arabic', text: 'أحب قراءة الكتب في المساء', word: 'الكتب', words: ['أحب', 'قراءة', 'الكتب', 'المساء'], sharesCharacters: 'الكاتب مشهور جدا' },
])('words in $script', ({ text, word, words, sharesCharacters }) => {
  it('are found whole, with their vowel signs', () => {
    const terms = englishAnalyzer.terms(text)
    expect(terms).toEqual(expect.arrayContaining(words))
    for (const w of words) expect(terms).toContain(w)
  })

  it('are searchable without matching text that only shares characters', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ name: 'P', id: 'p1' })
    const hit = await memory.archive.create('p1', text)
    await memory.archive.create('p1', sharesCharacters)
    expect((await memory.search('p1', word)).map((h) => h.id)).toEqual([hit.id])
    memory.close()
  })
})
