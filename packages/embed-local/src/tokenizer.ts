/*
 * The Universal Sentence Encoder lite's tokenizer: SentencePiece's unigram
 * model, decoded with Viterbi over a trie of its vocabulary. The algorithm is
 * that of TensorFlow.js models' `universal-sentence-encoder` (Apache-2.0); the
 * model was trained with these exact pieces, so ids must come out the same.
 */

/** One vocabulary entry: the piece and its log probability. */
export type VocabEntry = readonly [piece: string, score: number]

/** Word boundaries are this character in SentencePiece's pieces. */
const SEPARATOR = '\u2581'
/** The first ids are control symbols (`<unk>`, `<s>`, `</s>`, …), never matched in text. */
const RESERVED = 6

interface TrieNode {
  children: Map<string, TrieNode>
  /** Id of the piece ending here, or -1. */
  id: number
}

/** Turns text into the model's piece ids. Build once per vocabulary (about 8,000 pieces). */
export interface Tokenizer {
  encode(text: string): number[]
}

/** Builds the tokenizer of a vocabulary (`vocab.json` of the model package). */
export function createTokenizer(vocabulary: readonly VocabEntry[]): Tokenizer {
  const root: TrieNode = { children: new Map(), id: -1 }
  const lengths: number[] = []
  for (let id = 0; id < vocabulary.length; id++) {
    const symbols = [...vocabulary[id]![0]]
    lengths[id] = symbols.length
    if (id < RESERVED) continue
    let node = root
    for (const s of symbols) {
      let next = node.children.get(s)
      if (!next) {
        next = { children: new Map(), id: -1 }
        node.children.set(s, next)
      }
      node = next
    }
    node.id = id
  }

  function encode(text: string): number[] {
    const normalized = text.normalize('NFKC')
    if (normalized.length === 0) return []
    const symbols = [...(SEPARATOR + normalized.replace(/ /g, SEPARATOR))]
    const n = symbols.length
    // best[e]: best score of a segmentation of symbols[0, e); word[e]: the id of its last piece.
    const best = new Float64Array(n + 1)
    const word = new Int32Array(n + 1)
    const seen = new Uint8Array(n + 1)
    // An unknown symbol's piece (<unk>) is one symbol long whatever the length of its vocabulary entry.
    const unknown = new Uint8Array(n + 1)
    seen[0] = 1
    for (let start = 0; start < n; start++) {
      if (!seen[start]) continue
      let node = root.children.get(symbols[start]!)
      let matched = false
      for (let end = start + 1; node; end++) {
        if (node.id >= 0) {
          matched = true
          relax(end, best[start]! + vocabulary[node.id]![1], node.id)
        }
        node = end < n ? node.children.get(symbols[end]!) : undefined
      }
      // An unknown symbol becomes id 0 (<unk>), one symbol long, with score 0.
      if (!matched) relax(start + 1, best[start]!, 0, true)
    }
    function relax(end: number, score: number, id: number, isUnknown = false): void {
      // Ties go to the later piece, as in the reference decoder.
      if (!seen[end] || score >= best[end]!) {
        best[end] = score
        word[end] = id
        unknown[end] = isUnknown ? 1 : 0
        seen[end] = 1
      }
    }
    const ids: number[] = []
    for (let end = n; end > 0; ) {
      const id = word[end]!
      ids.push(id)
      end -= unknown[end] ? 1 : lengths[id]!
    }
    ids.reverse()
    return mergeUnknown(ids)
  }

  return { encode }
}

/** Consecutive unknown pieces count as one, as SentencePiece emits them. */
function mergeUnknown(ids: number[]): number[] {
  const out: number[] = []
  for (const id of ids) if (!(id === 0 && out.at(-1) === 0)) out.push(id)
  return out
}
