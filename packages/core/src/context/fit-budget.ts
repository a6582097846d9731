import type { Tokenizer } from '../store/token-estimate.js'
import { renderSection, SECTION_SEPARATOR } from './escape.js'
import type { SectionName } from './context.js'

/** One rendered line of a section, with its cost and its place when shown. */
export interface DraftItem {
  line: string
  tokens: number
  order: number
  key?: string
}
/**
 * A section before it is fitted: items in the order they should be kept
 * (most wanted first). `contiguous` sections stop at the first item that does
 * not fit (recent messages keep an unbroken newest run).
 */
export interface Draft {
  name: SectionName
  items: DraftItem[]
  contiguous: boolean
}
/** A fitted section: kept items in display order, and what did not fit. */
export interface FittedSection {
  name: SectionName
  kept: DraftItem[]
  dropped: DraftItem[]
  text: string
  tokens: number
}

/** Fixed display order: what changes least comes first (prompt caching). */
export const SECTION_ORDER: readonly SectionName[] = [
  'blocks',
  'facts',
  'knowledge',
  'recalled',
  'summaries',
  'observations',
  'recent',
  'lessons',
  'patterns',
  'limitations',
]
/** Share of the budget each section may claim when all of them compete. */
const SHARES: Record<SectionName, number> = {
  blocks: 0.2,
  facts: 0.15,
  knowledge: 0.1,
  recalled: 0.25,
  summaries: 0.08,
  observations: 0.2,
  recent: 0.27,
  lessons: 0.05,
  patterns: 0.05,
  limitations: 0.05,
}
/** Who gets budget left over by sections that needed less than their share. */
const LEFTOVER_ORDER: readonly SectionName[] = [
  'recalled',
  'recent',
  'observations',
  'facts',
  'knowledge',
  'blocks',
  'summaries',
  'lessons',
  'patterns',
  'limitations',
]
/** Who loses items first if the exact count of the assembled text is over budget. */
const SHAVE_ORDER: readonly SectionName[] = [
  'limitations',
  'patterns',
  'lessons',
  'summaries',
  'blocks',
  'knowledge',
  'facts',
  'recalled',
  'observations',
  'recent',
]

/**
 * Chooses the items of every section so that the assembled text, counted by
 * `tokenizer`, is at most `budget` tokens. Deterministic for the same drafts.
 */
export function fitBudget(drafts: readonly Draft[], budget: number, tokenizer: Tokenizer): FittedSection[] {
  const separator = tokenizer.count(SECTION_SEPARATOR)
  const wrapper = (name: SectionName) => tokenizer.count(renderSection(name, [''])) + separator
  const cost = (item: DraftItem) => item.tokens + 1
  const byName = new Map(drafts.filter((d) => d.items.length > 0).map((d) => [d.name, d]))
  const need = new Map<SectionName, number>()
  for (const [name, d] of byName) need.set(name, wrapper(name) + d.items.reduce((sum, item) => sum + cost(item), 0))

  // Allowances: each section its share, then the leftover in priority order.
  const allowance = new Map<SectionName, number>()
  let left = budget
  for (const [name, n] of need) {
    const a = Math.min(n, Math.floor(SHARES[name] * budget))
    allowance.set(name, a)
    left -= a
  }
  for (const name of LEFTOVER_ORDER) {
    const n = need.get(name)
    if (n === undefined || left <= 0) continue
    const extra = Math.min(left, n - allowance.get(name)!)
    allowance.set(name, allowance.get(name)! + extra)
    left -= extra
  }

  // Greedy fill within allowances, then a second pass for whatever budget is still unused.
  const kept = new Map<SectionName, Set<DraftItem>>()
  const used = new Map<SectionName, number>()
  const fill = (name: SectionName, limit: number) => {
    const d = byName.get(name)!
    const set = kept.get(name) ?? new Set<DraftItem>()
    let spent = used.get(name) ?? wrapper(name)
    for (const item of d.items) {
      if (set.has(item)) continue
      if (spent + cost(item) > limit) {
        if (d.contiguous) break
        continue
      }
      set.add(item)
      spent += cost(item)
    }
    if (set.size > 0) {
      kept.set(name, set)
      used.set(name, spent)
    }
  }
  for (const name of SECTION_ORDER) if (byName.has(name)) fill(name, allowance.get(name)!)
  for (const name of LEFTOVER_ORDER) {
    if (!byName.has(name)) continue
    const spentElsewhere = [...used].reduce((sum, [n, u]) => (n === name ? sum : sum + u), 0)
    fill(name, budget - spentElsewhere)
  }

  // The estimate above adds per-part counts; check the real count and shave until it fits.
  for (;;) {
    const sections = assemble(byName, kept, tokenizer)
    const text = sections
      .filter((s) => s.kept.length > 0)
      .map((s) => s.text)
      .join(SECTION_SEPARATOR)
    if (tokenizer.count(text) <= budget) return sections
    const victim = SHAVE_ORDER.find((name) => (kept.get(name)?.size ?? 0) > 0)
    if (!victim) return sections
    const set = kept.get(victim)!
    // Shave the least wanted item (for recent: the oldest one kept).
    const least = [...set].reduce((a, b) => (byName.get(victim)!.items.indexOf(a) > byName.get(victim)!.items.indexOf(b) ? a : b))
    set.delete(least)
  }
}

function assemble(byName: Map<SectionName, Draft>, kept: Map<SectionName, Set<DraftItem>>, tokenizer: Tokenizer): FittedSection[] {
  const out: FittedSection[] = []
  for (const name of SECTION_ORDER) {
    const d = byName.get(name)
    if (!d) continue
    const set = kept.get(name) ?? new Set<DraftItem>()
    const keptItems = [...set].sort((a, b) => a.order - b.order)
    const text =
      keptItems.length > 0
        ? renderSection(
            name,
            keptItems.map((i) => i.line),
          )
        : ''
    out.push({ name, kept: keptItems, dropped: d.items.filter((i) => !set.has(i)), text, tokens: text ? tokenizer.count(text) : 0 })
  }
  return out
}
