/** Counts tokens for budgets. Supply a real one (tiktoken, the model's) for exact budgets. */
export interface Tokenizer {
  /** Number of tokens in `text` (sync: it runs in hot loops). */
  count(text: string): number
}

// CJK ideographs, kana and hangul are roughly one token each.
const WIDE = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/g

/**
 * The default tokenizer: a fast estimate close to BPE tokenizers for English
 * (~4 characters a token), counting CJK characters one each. Never under 1 for
 * non-empty text.
 */
export const estimateTokenizer: Tokenizer = {
  count(text: string): number {
    if (text.length === 0) return 0
    const wide = text.match(WIDE)?.length ?? 0
    return Math.max(1, Math.ceil((text.length - wide) / 4) + wide)
  },
}
