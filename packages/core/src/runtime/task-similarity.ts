/** How tasks are compared for dedupe: normalised text and a fuzzy similarity. */

/** Descriptions at least this similar (0–1) and due within {@link NEAR_DUPLICATE_WINDOW_MS} are the same task. */
export const SIMILARITY_THRESHOLD = 0.8
/** Two similar tasks due this close together are near-duplicates. */
export const NEAR_DUPLICATE_WINDOW_MS = 30 * 60_000

/**
 * Similarity of two normalised texts in [0, 1]: the Dice coefficient of their character
 * bigrams, over the words sorted so word order does not matter. Typos and small edits
 * score high ("call mom tomorow" vs "call mom tomorrow"), different objects low.
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1
  const x = bigrams(sortWords(a))
  const y = bigrams(sortWords(b))
  if (x.size === 0 || y.size === 0) return 0
  let common = 0
  let total = 0
  for (const [gram, n] of x) common += Math.min(n, y.get(gram) ?? 0)
  for (const n of x.values()) total += n
  for (const n of y.values()) total += n
  return (2 * common) / total
}

function sortWords(text: string): string {
  return text.split(' ').sort().join(' ')
}

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const g = text.slice(i, i + 2)
    grams.set(g, (grams.get(g) ?? 0) + 1)
  }
  return grams
}
