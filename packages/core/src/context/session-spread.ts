/*
 * Answers spread over sessions: a question that asks for more than one event
 * ("which restaurants…", "how many times…", "every trip…") needs hits from
 * several sessions, and near neighbours of one session (its greetings, its
 * follow-ups) otherwise crowd them out of the budget.
 */
import type { Hit } from '../search/types.js'

/** Hits of one session kept at their rank before the other sessions' get a turn. */
export const PER_SESSION = 2

const SEVERAL = /\b(?:how many|how often|in total|all (?:the|of)|every|each time|times|several|both|list)\b/i
const PLURAL_ASK = /\b(?:which|what) (\w+)\b/gi
const NOT_NOUNS = new Set(['does', 'is', 'was', 'has', 'this', 'his', 'its', 'us', 'kinds', 'sorts'])

/** Whether a query asks for more than one event (a count, a list, or "which <plural>"). */
export function asksForSeveral(query: string): boolean {
  if (SEVERAL.test(query)) return true
  for (const m of query.matchAll(PLURAL_ASK)) {
    const word = m[1]!.toLowerCase()
    if (!NOT_NOUNS.has(word) && word.length > 3 && /(?:[^su]s|ies)$/.test(word)) return true
  }
  return false
}

/**
 * For a query that asks for several events, at most {@link PER_SESSION} hits
 * of a session keep their rank; the rest of that session follows every
 * session's first ones, in rank order. Other queries keep their order.
 */
export function spreadOverSessions(query: string, hits: readonly Hit[]): Hit[] {
  if (!asksForSeveral(query)) return [...hits]
  const kept: Hit[] = []
  const later: Hit[] = []
  const taken = new Map<string, number>()
  for (const h of hits) {
    const session = h.sessionId
    const n = session === undefined ? 0 : (taken.get(session) ?? 0)
    if (session !== undefined) taken.set(session, n + 1)
    ;(n < PER_SESSION ? kept : later).push(h)
  }
  return [...kept, ...later]
}
