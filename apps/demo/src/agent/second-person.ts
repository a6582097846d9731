/** First-person words and what the agent says back in their place. */
const SWAP: Record<string, string> = {
  i: 'you',
  me: 'you',
  my: 'your',
  mine: 'yours',
  myself: 'yourself',
  we: 'you',
  us: 'you',
  our: 'your',
  ours: 'yours',
  am: 'are',
}

/**
 * The user's words as the agent says them back: "my favourite colour" →
 * "your favourite colour". Word by word, keeping a leading capital.
 *
 * @example secondPerson('My sister and I') // 'Your sister and you'
 */
export function secondPerson(text: string): string {
  return text.replace(/\p{L}+/gu, (word) => {
    const swapped = SWAP[word.toLowerCase()]
    if (swapped === undefined) return word
    return word[0] === word[0]!.toUpperCase() && word !== 'I' ? swapped[0]!.toUpperCase() + swapped.slice(1) : swapped
  })
}
