import type { Fact } from '../facts/facts.js'
import type { Memory } from '../compose/memory.js'
import type { Neighbour } from './neighbour-turns.js'
import { recalledItems } from './recall-plan.js'
import type { Hit } from '../search/types.js'
import { USER_PROJECT } from '../store/store-context.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { escapeMemoryText, formatTime } from './escape.js'
import type { Draft, DraftItem } from './fit-budget.js'
import { type KnowledgeGathered, knowledgeItems } from './knowledge-section.js'
import { factDrafts } from './fact-drafts.js'

/** What the drafts are made from, fetched once per build. */
export interface Gathered {
  projectId: string
  blocks: Awaited<ReturnType<Memory['blocks']['list']>>
  facts: Fact[]
  /** Search hits, best first (facts and everything else). */
  hits: Hit[]
  summaries: NonNullable<Awaited<ReturnType<Memory['summaries']['latest']>>>[]
  recent: Awaited<ReturnType<Memory['messages']['tail']>>
  lessons: Awaited<ReturnType<Memory['lessons']['list']>>
  limitations: Awaited<ReturnType<Memory['limitations']['open']>>
  /** Patterns at or above the threshold, the user's first. */
  patterns: Awaited<ReturnType<Memory['patterns']['list']>>
  /** The session's observations in force, oldest first. */
  observations: Awaited<ReturnType<Memory['observations']['list']>>
  /** Turns near strong message hits, nearest first, by hit id. */
  neighbours: ReadonlyMap<string, readonly Neighbour[]>
  /** The entities the query names and their relations (knowledge-section.ts). */
  knowledge?: KnowledgeGathered
}

/** Cuts `line` so it counts at most `max` tokens (binary search on its length). */
export function clampLine(line: string, max: number, tokenizer: Tokenizer): string {
  if (tokenizer.count(line) <= max) return line
  let lo = 0
  let hi = line.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (tokenizer.count(`${line.slice(0, mid)} …`) <= max) lo = mid
    else hi = mid - 1
  }
  return `${line.slice(0, lo)} …`
}

function item(line: string, order: number, tokenizer: Tokenizer, key?: string): DraftItem {
  const out: DraftItem = { line, tokens: tokenizer.count(line), order }
  if (key !== undefined) out.key = key
  return out
}

/** The fact items of a build's gathered memory, by the limit they were drafted with: a build drafts twice. */
const draftedFacts = new WeakMap<Gathered, { max: number; items: DraftItem[] }>()

/** Facts: shown by key (stable), kept by relevance to the query, then newest (fact-drafts.ts). Drafted once per build (fitting never changes an item). */
function factItemsOf(g: Gathered, tokenizer: Tokenizer, maxItemTokens: number, owner: (projectId: string) => string): DraftItem[] {
  const known = draftedFacts.get(g)
  if (known && known.max === maxItemTokens) return known.items
  const items = factDrafts(g.projectId, g.facts, g.hits, tokenizer, maxItemTokens, owner, (line, order) =>
    item(clampLine(line, maxItemTokens, tokenizer), order, tokenizer),
  )
  draftedFacts.set(g, { max: maxItemTokens, items })
  return items
}

/**
 * Builds the draft of every section: escaped lines, selection priority and
 * display order. Hits whose `kind:id` is in `shownInRecent` are left out of recalled.
 */
export function draftSections(g: Gathered, tokenizer: Tokenizer, maxItemTokens: number, shownInRecent: ReadonlySet<string>): Draft[] {
  const owner = (projectId: string) => (projectId === USER_PROJECT && g.projectId !== USER_PROJECT ? 'user/' : '')
  const clamp = (line: string, max = maxItemTokens) => clampLine(line, Math.min(max, maxItemTokens), tokenizer)

  // Blocks: user's first, then the project's, each by label.
  const blocks = g.blocks.map((b, i) => item(clamp(`- ${owner(b.projectId)}${escapeMemoryText(b.label)}: ${escapeMemoryText(b.value)}`), i, tokenizer))

  const factItems = factItemsOf(g, tokenizer, maxItemTokens, owner)

  // Recalled: hits (and neighbours of strong ones) minus what other sections show.
  const hidden = new Set([...shownInRecent, ...g.summaries.map((s) => `summary:${s.id}`), ...g.observations.map((o) => `observation:${o.id}`)])
  const recalled = recalledItems(
    g.hits.filter((h) => h.kind !== 'fact'),
    g.neighbours,
    hidden,
    tokenizer,
    clamp,
  )

  const summaries = g.summaries.map((s, i) => item(clamp(`- (${s.kind} summary, ${formatTime(s.createdAt)}) ${escapeMemoryText(s.text)}`), i, tokenizer))

  // Recent: newest kept first, shown oldest first.
  const recent = g.recent.map((m) => item(clamp(`${m.role}: ${escapeMemoryText(m.content)}`), m.seq, tokenizer, `message:${m.id}`)).reverse()

  const lessons = [...g.lessons]
    .sort((a, b) => b.occurrences - a.occurrences || b.updatedAt - a.updatedAt || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0))
    .map((l, i) => item(clamp(`- [${escapeMemoryText(l.domain)}] ${escapeMemoryText(l.rule)}`), i, tokenizer))

  return [
    { name: 'blocks', items: blocks, contiguous: false },
    { name: 'facts', items: factItems, contiguous: false },
    { name: 'knowledge', items: g.knowledge ? knowledgeItems(g.knowledge, clamp, tokenizer) : [], contiguous: false },
    { name: 'recalled', items: recalled, contiguous: false },
    { name: 'summaries', items: summaries, contiguous: false },
    // Observations: stored text only, oldest first, so the section is the same bytes until the next one (prompt caches hit); newest kept first.
    {
      name: 'observations',
      items: g.observations
        .map((o, i) => item(clamp(`- [${formatTime(o.observedAt)}] (${o.priority}) ${escapeMemoryText(o.text)}`), i, tokenizer, `observation:${o.id}`))
        .reverse(),
      contiguous: true,
    },
    { name: 'recent', items: recent, contiguous: true },
    { name: 'lessons', items: lessons, contiguous: false },
    // Open limitations, oldest first: what the agent cannot do yet, and its plan.
    // Patterns: kept and shown most confident first.
    {
      name: 'patterns',
      items: [...g.patterns]
        .sort((a, b) => b.confidence - a.confidence || b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
        .map((p, i) => item(clamp(`- ${owner(p.projectId)}${escapeMemoryText(p.text)} (confidence ${p.confidence.toFixed(2)})`), i, tokenizer)),
      contiguous: false,
    },
    {
      name: 'limitations',
      items: g.limitations.map((l, i) => item(clamp(`- ${escapeMemoryText(l.title)}${l.plan ? ` (plan: ${escapeMemoryText(l.plan)})` : ''}`), i, tokenizer)),
      contiguous: false,
    },
  ]
}
