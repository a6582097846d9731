import { porterStem } from './porter-stemmer.js'
import { ENGLISH_STOP_WORDS } from './stop-words.js'

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
  /** Maps a folded word to its stem. Default: Porter (English). */
  stem?: (word: string) => string
  /** Longest term kept (characters); longer runs are cut. Default 40. */
  maxTermLength?: number
}

const MARKS = /\p{M}+/gu
const WORD = /[\p{L}\p{N}]+/gu
// Scripts written without spaces: every character is a term.
const UNSPACED = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\u0e00-\u0e7f]/u
const UNSPACED_ALL = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\u0e00-\u0e7f]/gu

/** Lower-cases and strips diacritics (NFKD, then drops combining marks): "Crème" → "creme". */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase()
}

/**
 * Creates an analyzer: Unicode letters and digits, case folding, diacritics
 * removed, stop words dropped, words stemmed; characters of CJK and Thai text
 * become one term each.
 *
 * @example createAnalyzer({ stopWords: new Set(['le', 'la']), stem: (w) => w })
 */
export function createAnalyzer(options: AnalyzerOptions = {}): Analyzer {
  const stopWords = options.stopWords ?? ENGLISH_STOP_WORDS
  const stem = options.stem ?? porterStem
  const maxLength = options.maxTermLength ?? 40
  return {
    terms(text) {
      const out: string[] = []
      for (const match of foldText(text).matchAll(WORD)) {
        const word = match[0]
        if (UNSPACED.test(word)) {
          for (const part of word.split(UNSPACED_ALL)) if (part && !stopWords.has(part)) out.push(stem(part).slice(0, maxLength))
          for (const ch of word.match(UNSPACED_ALL) ?? []) out.push(ch)
          continue
        }
        if (stopWords.has(word)) continue
        const term = stem(word)
        if (term.length > 0) out.push(term.length > maxLength ? term.slice(0, maxLength) : term)
      }
      return out
    },
  }
}

/** The default analyzer: English stop words and the Porter stemmer. */
export const englishAnalyzer: Analyzer = createAnalyzer()
