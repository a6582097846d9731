import type { Analyzer } from './analyzer.js'
import type { Candidate } from '../ranking/bm25.js'
import { irregularForms } from './irregular-verbs.js'

/** Weight of the variants query's score beside the original's. */
export const VARIANT_WEIGHT = 0.3
/** At most this many variant terms per query (each costs a document-frequency read). */
export const MAX_VARIANTS = 12
const SUFFIXES = ['', 'e', 'y', 'ies', 'ied', 'ic', 'ical', 'ion', 'ation', 'ing', 'ed', 'er', 's', 'es', 'ly', 'ment', 'ness', 'ity', 'al', 'ous', 'ive']

/**
 * Derived word forms of the query's words (allergy → allergic, adopt →
 * adoption) that the stemmer does not bring together: each word of five
 * letters or more is cut to a root by its longest known suffix and regrown
 * with every suffix; the stems of those forms that the query does not
 * already hold are returned (at most {@link MAX_VARIANTS}, sorted), after
 * the other forms of irregular verbs (buy → bought, went → go, gone).
 */
export function variantTerms(analyzer: Analyzer, query: string, queryTerms: ReadonlySet<string>): string[] {
  const out = new Set<string>()
  const irregular = new Set<string>()
  for (const word of query.toLowerCase().match(/\p{L}+/gu) ?? []) {
    if (analyzer.terms(word).length === 0) continue
    for (const form of irregularForms(word)) for (const t of analyzer.terms(form)) if (!queryTerms.has(t)) irregular.add(t)
    // Short verbs in -y: the stemmer keeps "try" apart from "tried" and "tries".
    if (word.length < 5 && /[^aeiou]y$/.test(word))
      for (const form of [`${word.slice(0, -1)}ied`, `${word.slice(0, -1)}ies`]) for (const t of analyzer.terms(form)) if (!queryTerms.has(t)) irregular.add(t)
    if (word.length < 5) continue
    const suffix = [...SUFFIXES].sort((a, b) => b.length - a.length).find((s) => s !== '' && word.endsWith(s) && word.length - s.length >= 4) ?? ''
    const root = word.slice(0, word.length - suffix.length)
    for (const s of SUFFIXES) for (const t of analyzer.terms(root + s)) if (!queryTerms.has(t) && !irregular.has(t)) out.add(t)
  }
  return [...[...irregular].sort(), ...[...out].sort()].slice(0, MAX_VARIANTS)
}

/** `(1 − weight) · original + weight · variants`, the variants' scores brought to the original's scale. */
export function mixVariants(original: readonly Candidate[], variants: readonly Candidate[], weight = VARIANT_WEIGHT): Candidate[] {
  // Nothing matched the words as written: the derived forms' own scale stands (else every score would be 0).
  const b = Math.max(Number.MIN_VALUE, ...variants.map((c) => c.score))
  const a = original.length > 0 ? Math.max(Number.MIN_VALUE, ...original.map((c) => c.score)) : b
  const out = new Map<string, Candidate>()
  for (const c of original) out.set(c.docId, { ...c, score: (1 - weight) * c.score })
  for (const c of variants) {
    const found = out.get(c.docId)
    const add = (weight * c.score * a) / b
    if (found) found.score += add
    else out.set(c.docId, { ...c, score: add })
  }
  return [...out.values()]
}
