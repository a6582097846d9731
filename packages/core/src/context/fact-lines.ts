import type { Fact } from '../facts/facts.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { escapeMemoryText } from './escape.js'

/*
 * What a build computes of each fact, kept by fact object: the facts view (facts-view.ts) hands
 * out the same objects until a fact changes, so a project of thousands of facts escapes and
 * counts each line once, not on every build. Per tokenizer, as counts depend on it.
 */

/** A fact's line as the facts section shows it, with its token count. */
export interface FactLine {
  line: string
  tokens: number
}

interface Known {
  owner: string
  line: FactLine
}

const lines = new WeakMap<Tokenizer, WeakMap<Fact, Known>>()
const costs = new WeakMap<Tokenizer, WeakMap<Fact, number>>()

const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

/** The fact's line (`owner` prefixes the key: `user/` for the user's facts in another project's context) and its tokens. */
export function factLine(fact: Fact, owner: string, tokenizer: Tokenizer): FactLine {
  let byFact = lines.get(tokenizer)
  if (!byFact) lines.set(tokenizer, (byFact = new WeakMap()))
  const known = byFact.get(fact)
  if (known && known.owner === owner) return known.line
  const line = `- ${owner}${escapeMemoryText(fact.key)}: ${escapeMemoryText(valueText(fact.value))}`
  const out = { line, tokens: tokenizer.count(line) }
  byFact.set(fact, { owner, line: out })
  return out
}

/** What the fact could take of the budget, as the recalled section's room is reckoned: its value and key, each with 4 tokens of framing. */
export function factCost(fact: Fact, tokenizer: Tokenizer): number {
  let byFact = costs.get(tokenizer)
  if (!byFact) costs.set(tokenizer, (byFact = new WeakMap()))
  let cost = byFact.get(fact)
  if (cost === undefined) {
    cost = tokenizer.count(JSON.stringify(fact.value)) + 4 + tokenizer.count(fact.key) + 4
    byFact.set(fact, cost)
  }
  return cost
}
