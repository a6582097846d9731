/*
 * Word segmentation for the analyzer. Scripts written with spaces between
 * words split on anything that is not a letter, mark or digit (fast, and the
 * same words a word segmenter finds there). Text with characters of scripts
 * written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer,
 * Myanmar) goes through `Intl.Segmenter`, whose dictionaries find the words;
 * where it is missing, each such character is a word of its own.
 */

const WORD = /[\p{L}\p{M}\p{N}]+/gu
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u
const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{M}]+/gu

type WordSegmenter = { segment(text: string): Iterable<{ segment: string; isWordLike?: boolean }> }
let segmenter: WordSegmenter | undefined | null

function wordSegmenter(): WordSegmenter | undefined {
  if (segmenter === undefined) {
    const Segmenter = (Intl as { Segmenter?: new (locale: undefined, options: { granularity: 'word' }) => WordSegmenter }).Segmenter
    segmenter = Segmenter ? new Segmenter(undefined, { granularity: 'word' }) : null
  }
  return segmenter ?? undefined
}

/** The words of (already folded) text, in order. */
export function segmentWords(text: string): string[] {
  // One global match builds the list of words inside the engine (no match object per word).
  if (!UNSPACED.test(text)) return text.match(WORD) ?? []
  const out: string[] = []
  const s = wordSegmenter()
  if (!s) {
    for (const m of text.matchAll(WORD)) {
      const word = m[0]
      if (!UNSPACED.test(word)) out.push(word)
      else for (const part of word.split(UNSPACED_RUN)) if (part) out.push(part)
      if (UNSPACED.test(word)) for (const run of word.match(UNSPACED_RUN) ?? []) for (const ch of run) if (UNSPACED.test(ch)) out.push(ch)
    }
    return out
  }
  for (const part of s.segment(text)) {
    if (part.isWordLike === false) continue
    // A word-like segment may still hold punctuation ("don't", "3.5"): split it as spaced text is.
    for (const m of part.segment.matchAll(WORD)) out.push(m[0])
  }
  return out
}
