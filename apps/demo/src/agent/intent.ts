/**
 * The scripted agent's whole "understanding": a few sentence patterns.
 * Shared by the agent (what to answer) and the extractor (what to remember).
 */

/** What one sentence asks for. */
export type Intent =
  | { kind: 'remember'; key: string; subject: string; value: string | number | boolean }
  | { kind: 'forget'; key: string; subject: string }
  | { kind: 'ask'; key: string; subject: string }
  | { kind: 'list' }
  | { kind: 'relate'; subject: string; predicate: 'works_at' | 'lives_in'; object: string; objectType: 'organisation' | 'place' }
  | { kind: 'chat' }

const rememberIs = /^(?:please\s+)?remember(?:\s+that)?\s+(.+?)\s+(?:is|are|=|was|were)\s+(.+)$/is
const rememberNote = /^(?:please\s+)?remember(?:\s+that)?\s+(.+)$/is
const forget = /^(?:please\s+)?forget(?:\s+(?:about|that))?\s+(.+)$/is
const ask = /^(?:what(?:'s|\s+is|\s+are)|who(?:'s|\s+is)|do\s+you\s+(?:know|remember))\s+(.+?)\??$/is
const list = /^what\s+do\s+you\s+(?:know|remember)(?:\s+about\s+me)?\s*\??$/is
/** "Dana works at Acme", "Dana now lives in Porto": a named person (capitalised, not "I" or "my …") and a place or employer. */
const relate = /^(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)?)\s+(?:now\s+)?(works\s+at|lives\s+in)\s+(\p{Lu}[^.!?]*?)\s*[.!]*$/u
const NOT_A_NAME = /^(?:i|my|our|your|the|we|you|he|she|they|it)$/i

/**
 * A fact key from a subject: lower case, leading "my"/"the" dropped, words
 * joined by `_` ("My favourite colour" → `favourite_colour`).
 */
export function keyOf(subject: string): string {
  return (
    subject
      .toLowerCase()
      .replace(/^(?:my|our|the|your)\s+/, '')
      .replace(/[^\p{L}\p{N}]+/gu, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 64) || 'note'
  )
}

function cleanValue(text: string): string | number | boolean {
  const value = text.trim().replace(/[.!]+$/, '')
  if (/^-?\d+(?:\.\d+)?$/.test(value)) return Number(value)
  if (/^(?:true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  return value
}

/** Splits a message into sentences (by newline, or ". " / "! " / "? " followed by a capital). */
export function sentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z])/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** The intent of one sentence. */
export function parseIntent(sentence: string): Intent {
  const text = sentence.trim()
  if (list.test(text)) return { kind: 'list' }
  let m = rememberIs.exec(text)
  if (m?.[1] && m[2]) return { kind: 'remember', key: keyOf(m[1]), subject: m[1].trim(), value: cleanValue(m[2]) }
  m = rememberNote.exec(text)
  if (m?.[1]) {
    const note = cleanValue(m[1])
    return { kind: 'remember', key: `note_${keyOf(String(note)).slice(0, 40)}`, subject: 'a note', value: note }
  }
  m = forget.exec(text)
  if (m?.[1]) {
    const subject = m[1].trim().replace(/[.!]+$/, '')
    return { kind: 'forget', key: keyOf(subject), subject }
  }
  m = ask.exec(text)
  if (m?.[1]) return { kind: 'ask', key: keyOf(m[1]), subject: m[1].trim() }
  m = relate.exec(text)
  if (m?.[1] && m[2] && m[3] && !NOT_A_NAME.test(m[1].split(/\s+/)[0]!)) {
    const works = /^works/i.test(m[2])
    return { kind: 'relate', subject: m[1], predicate: works ? 'works_at' : 'lives_in', object: m[3].trim(), objectType: works ? 'organisation' : 'place' }
  }
  return { kind: 'chat' }
}
