import type { Fact } from '../facts/facts.js'
import type { Hit } from '../search/types.js'
import { USER_PROJECT } from '../store/store-context.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { factLine } from './fact-lines.js'
import type { DraftItem } from './fit-budget.js'

/*
 * The facts section's items: shown by key (the user's first), kept by relevance to the query
 * (facts the search ranked, best first), then newest. With thousands of facts, ordering them all
 * by recency on every build is most of a build; that order does not depend on the query, so it
 * is kept with the items while the facts are the same objects (facts-view.ts keeps them), and a
 * build only lifts the few the search ranked to the front.
 */

/** Orders kept per tokenizer and project, for this many projects at most. */
const KEPT_ORDERS = 16

interface Order {
  /** The facts in shown order, as drafted. */
  shown: readonly Fact[]
  max: number
  /** Items in shown order (`order` is the position). */
  items: DraftItem[]
  /** Positions, newest first (then shown order). */
  newest: number[]
  /** Position by `${projectId}\u0001${id}`. */
  at: Map<string, number>
}

const orders = new WeakMap<Tokenizer, Map<string, Order>>()

const byShown = (a: Fact, b: Fact) => (a.projectId === b.projectId ? 0 : a.projectId === USER_PROJECT ? -1 : 1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/**
 * The facts' items, most wanted first: `facts` (a project's and the user's, in any order) drafted
 * as lines of at most `maxItemTokens` (`clamp` cuts a longer one), those of fact hits first by
 * their rank in `hits`, then the rest newest first.
 */
export function factDrafts(
  projectId: string,
  facts: readonly Fact[],
  hits: readonly Hit[],
  tokenizer: Tokenizer,
  maxItemTokens: number,
  owner: (projectId: string) => string,
  clamp: (line: string, order: number) => DraftItem,
): DraftItem[] {
  let shown = facts
  for (let i = 1; i < facts.length; i++)
    if (byShown(facts[i - 1]!, facts[i]!) > 0) {
      shown = [...facts].sort(byShown)
      break
    }
  const order = orderOf(projectId, shown, tokenizer, maxItemTokens, owner, clamp)
  // A fact's rank is its place among the fact hits (its last, if the hits name it twice).
  const rank = new Map<number, number>()
  let j = 0
  for (const h of hits) {
    if (h.kind !== 'fact') continue
    const i = order.at.get(`${h.projectId}\u0001${h.id}`)
    if (i !== undefined) rank.set(i, j)
    j++
  }
  const out = [...rank.entries()].sort((a, b) => a[1] - b[1]).map(([i]) => order.items[i]!)
  for (const i of order.newest) if (!rank.has(i)) out.push(order.items[i]!)
  return out
}

function orderOf(
  projectId: string,
  shown: readonly Fact[],
  tokenizer: Tokenizer,
  max: number,
  owner: (projectId: string) => string,
  clamp: (line: string, order: number) => DraftItem,
): Order {
  let byProject = orders.get(tokenizer)
  if (!byProject) orders.set(tokenizer, (byProject = new Map()))
  const known = byProject.get(projectId)
  if (known && known.max === max && sameFacts(known.shown, shown)) {
    byProject.delete(projectId)
    byProject.set(projectId, known)
    return known
  }
  const items = shown.map((f, i) => {
    const { line, tokens } = factLine(f, owner(f.projectId), tokenizer)
    return tokens <= max ? { line, tokens, order: i } : clamp(line, i)
  })
  const newest = shown.map((_, i) => i).sort((a, b) => shown[b]!.updatedAt - shown[a]!.updatedAt || a - b)
  const order: Order = { shown: [...shown], max, items, newest, at: new Map(shown.map((f, i) => [`${f.projectId}\u0001${f.id}`, i])) }
  byProject.set(projectId, order)
  if (byProject.size > KEPT_ORDERS) byProject.delete(byProject.keys().next().value!)
  return order
}

/** Whether two lists hold the same fact objects in the same order. */
function sameFacts(a: readonly Fact[], b: readonly Fact[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
