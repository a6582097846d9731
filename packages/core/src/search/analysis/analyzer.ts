import { porterStem } from './porter-stemmer.js'
import { ENGLISH_STOP_WORDS } from './stop-words.js'
import { segmentWords } from './word-segments.js'

/**
 * Turns text into index terms. The same analyzer runs over documents and
 * queries; swap it per language with `openMemory({ analyzer })`. Changing the
 * analyzer of an existing store only affects documents written afterwards.
 */
export interface Analyzer {
  /** Index terms of `text`, in order, repeats kept (they are term frequencies). */
  terms(text: string): string[]
}

/** Options of {@link createAnalyzer}. */
export interface AnalyzerOptions {
  /** Words dropped after case folding (before stemming). Default: English. */
  stopWords?: ReadonlySet<string>
  /** Maps a folded word to its stem; a pure function (its answers are cached per word). Default: Porter for words of Latin letters and digits, others as they are. */
  stem?: (word: string) => string
  /** Longest term kept (characters); longer runs are cut. Default 40. */
  maxTermLength?: number
}

// Marks are dropped only after letters of scripts where they are optional accents (é → e); in Indic,
// Thai and other scripts they are vowels and part of the word ("हिन्दी" keeps its signs).
const ACCENTS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu
const ASCII_WORD = /^[a-z0-9]+$/
/** A character outside ASCII; text without one folds by lower-casing alone (no accents to drop, nothing to normalize). */
const NON_ASCII = /[\u0080-\uffff]/
/** Stems kept per analyzer: words follow a Zipf curve, so a small cache answers most of them. */
const STEM_CACHE_SIZE = 50_000

/**
 * Lower-cases and strips diacritics from Latin, Greek and Cyrillic letters
 * (NFKD, accents dropped, NFC): "Crème" → "creme"; other scripts keep their marks.
 */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase()
  return text.normalize('NFKD').replace(ACCENTS, '$1').normalize('NFC').toLowerCase()
}

/** Porter for plain Latin words; words of other scripts are kept as they are. */
function defaultStem(word: string): string {
  return ASCII_WORD.test(word) ? porterStem(word) : word
}

/**
 * Creates an analyzer: words found by Unicode word segmentation
 * (`Intl.Segmenter`, so Chinese, Japanese, Thai and other scripts written
 * without spaces split into words), case and accents folded, stop words
 * dropped, words stemmed.
 *
 * @example createAnalyzer({ stopWords: new Set(['le', 'la']), stem: (w) => w })
 */
export function createAnalyzer(options: AnalyzerOptions = {}): Analyzer {
  const stopWords = options.stopWords ?? ENGLISH_STOP_WORDS
  const stem = options.stem ?? defaultStem
  const maxLength = options.maxTermLength ?? 40
  // Terms of words already seen ('' for none: a stop word, or a word its stem empties); an app's stem
  // function must be pure, as every analyzer's is. One lookup per word.
  let cache = new Map<string, string>()
  const termOf = (word: string): string => {
    const stemmed = stopWords.has(word) ? '' : stem(word)
    const term = stemmed.length > maxLength ? stemmed.slice(0, maxLength) : stemmed
    if (cache.size >= STEM_CACHE_SIZE) cache = new Map()
    cache.set(word, term)
    return term
  }
  return {
    terms(text) {
      const out: string[] = []
      for (const word of segmentWords(foldText(text))) {
        const term = cache.get(word) ?? termOf(word)
        if (term.length > 0) out.push(term)
      }
      return out
    },
  }
}

/** The default analyzer: English stop words and the Porter stemmer. */
export const englishAnalyzer: Analyzer = createAnalyzer()
