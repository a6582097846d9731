/** Lower case, Unicode-normalised (NFKC), punctuation dropped, words single-spaced: how task descriptions and lesson rules are compared. */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}
