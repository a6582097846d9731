import type { Message } from '../messages/messages.js'
import type { Hit } from '../search/search.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { escapeMemoryText, formatTime } from './escape.js'
import type { DraftItem } from './fit-budget.js'
import { NEIGHBOUR_RADIUS, type Neighbour } from './neighbour-turns.js'

/** Hits below this fraction of the best hit's score end the recalled section (the score cliff). */
export const SCORE_FLOOR = 0.1
/** Two hits whose word sets overlap at least this much (Jaccard) are near-duplicates: the lower one is dropped. */
export const NEAR_DUPLICATE = 0.8
/** Message hits scoring at least this fraction of the best bring their adjacent turns along. */
export const NEIGHBOUR_FLOOR = 0.5
/** At most this many hits bring neighbours. */
export const MAX_NEIGHBOUR_HITS = 12
/** A neighbour line is cut to this many tokens (compact: it is context for its hit, not a hit). */
export const NEIGHBOUR_TOKENS = 80

/**
 * How many search hits a build first reads for its budget (recall depth
 * follows the budget): one hit per 60 tokens, at least 40, at most
 * {@link MAX_RECALL_DEPTH}.
 */
export function recallDepth(budget: number): number {
  return Math.min(MAX_RECALL_DEPTH, Math.max(40, Math.ceil(budget / 60)))
}

/** Most search hits a build reads, however deep it goes. */
export const MAX_RECALL_DEPTH = 400
/** Reading deeper needs at least this share of the hits dropped as near-duplicates. */
export const DUPLICATE_SHARE = 0.25
/** Tokens a recalled line adds around its text (time, kind). */
const LINE_OVERHEAD = 10

/**
 * Reads deeper while near-duplicates starve the section: at least
 * {@link DUPLICATE_SHARE} of the hits were dropped as near-duplicates, the
 * rest would not fill `room` tokens, and the list was cut by its limit before
 * reaching the cliff. The depth doubles each time, up to
 * {@link MAX_RECALL_DEPTH}. Memory full of near-identical turns thus still
 * fills a large budget; other memory reads the depth the budget sets.
 */
export async function deepenRecall(run: (limit: number) => Promise<Hit[]>, hits: Hit[], limit: number, room: number, tokenizer: Tokenizer): Promise<Hit[]> {
  let current = hits
  let depth = limit
  while (current.length >= depth && depth < MAX_RECALL_DEPTH) {
    const content = current.filter((h) => h.kind !== 'fact')
    if (aboveCliff(content).length < content.length) break
    const selected = selectHits(content)
    // Only near-duplicates starve the section: otherwise the depth already follows the budget.
    if (selected.length > content.length * (1 - DUPLICATE_SHARE)) break
    const tokens = selected.reduce((sum, h) => sum + tokenizer.count(h.text) + LINE_OVERHEAD, 0)
    if (tokens >= room) break
    depth = Math.min(MAX_RECALL_DEPTH, depth * 2)
    current = await run(depth)
  }
  return current
}

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

/** Whether the Jaccard overlap of two word sets reaches `threshold`, giving up as soon as it cannot. */
function overlaps(a: ReadonlySet<string>, b: ReadonlySet<string>, threshold: number): boolean {
  if (a.size === 0 || b.size === 0) return a.size === b.size
  if (Math.min(a.size, b.size) < threshold * Math.max(a.size, b.size)) return false
  // J ≥ t ⇔ shared ≥ t(|a| + |b|) / (1 + t): stop once too many words of `a` are missing from `b`.
  const needed = (threshold * (a.size + b.size)) / (1 + threshold)
  let missing = 0
  const allowed = a.size - needed
  for (const w of a) if (!b.has(w) && ++missing > allowed) return false
  return true
}

/**
 * The hits worth recalling, best first: those above the score cliff
 * ({@link SCORE_FLOOR} of the best score), without near-duplicates of a
 * better hit. Scores of different lists are only compared within one search.
 */
export function selectHits(hits: readonly Hit[], seen = new NearDuplicates()): Hit[] {
  return aboveCliff(hits).filter((hit) => seen.admit(hit))
}

/** The hits, best first, down to the score cliff ({@link SCORE_FLOOR} of the best score). */
export function aboveCliff(hits: readonly Hit[]): Hit[] {
  const best = hits[0]?.score ?? 0
  const end = hits.findIndex((h) => best > 0 && h.score < best * SCORE_FLOOR)
  return end < 0 ? [...hits] : hits.slice(0, end)
}

// A build drafts its sections twice with the same hit objects: their word sets and lines are computed once.
const wordCache = new WeakMap<object, Words>()
const lineCache = new WeakMap<object, DraftItem>()

/** A record's words, and the prefix of them (rarest-looking first) that any near-duplicate shares a word of. */
interface Words {
  set: Set<string>
  prefix: string[]
}

/** Longer words first (they are rarer), then by code unit: one order for every record, as prefix filtering needs. */
const byRarity = (a: string, b: string) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0)

/**
 * Prefix filtering (as in set-similarity joins): two sets with Jaccard ≥ t share at least
 * ⌈t·max(|a|,|b|)⌉ words, so under one global order of words their first |x| − ⌈t·|x|⌉ + 1
 * words have one in common. Only records sharing a prefix word are compared.
 */
function wordsOfRecord(record: Hit | Message): Words {
  let words = wordCache.get(record)
  if (!words) {
    const set = wordsOf('text' in record ? record.text : record.content)
    // The epsilon keeps a product like 0.8 × 5 from rounding up a word: a longer prefix is always safe.
    const length = set.size - Math.ceil(NEAR_DUPLICATE * set.size - 1e-9) + 1
    words = { set, prefix: [...set].sort(byRarity).slice(0, length) }
    wordCache.set(record, words)
  }
  return words
}

/** Remembers the word sets of admitted records and refuses near-duplicates of them. */
export class NearDuplicates {
  /** Admitted word sets by the words of their prefixes. */
  private readonly byWord = new Map<string, Set<string>[]>()
  private admittedEmpty = false
  /** True (and remembered) unless the record's text is a near-duplicate of an admitted one. */
  admit(record: Hit | Message): boolean {
    const { set, prefix } = wordsOfRecord(record)
    if (set.size === 0) {
      // Texts without words are near-duplicates of each other only.
      if (this.admittedEmpty) return false
      this.admittedEmpty = true
      return true
    }
    for (const word of prefix) for (const other of this.byWord.get(word) ?? []) if (overlaps(other, set, NEAR_DUPLICATE)) return false
    for (const word of prefix) {
      const list = this.byWord.get(word)
      if (list) list.push(set)
      else this.byWord.set(word, [set])
    }
    return true
  }
}

/** The message hits that bring their adjacent turns: the strongest, best first. */
export function neighbourSeeds(hits: readonly Hit[]): Hit[] {
  const best = hits[0]?.score ?? 0
  return hits.filter((h) => h.kind === 'message' && h.score >= best * NEIGHBOUR_FLOOR).slice(0, MAX_NEIGHBOUR_HITS)
}

/** Where a recalled line sits when shown: by time, then id (stable for the same memory and query). */
interface Placed {
  at: number
  id: string
  item: DraftItem
}

/**
 * Draft items of the recalled section. Priority (the order items are kept in
 * when the budget runs short): every selected hit by rank, then the turns
 * next to strong message hits by their hit's rank, then the turns two away
 * (near-duplicate neighbours dropped too). Display: by time, so a hit and
 * its neighbours read as one passage, and the same memory and query give
 * the same order at every budget.
 */
export function recalledItems(
  hits: readonly Hit[],
  neighbours: ReadonlyMap<string, readonly Neighbour[]>,
  hidden: ReadonlySet<string>,
  tokenizer: Tokenizer,
  clamp: (line: string, max?: number) => string,
): DraftItem[] {
  const placed: Placed[] = []
  const seen = new Set(hidden)
  const add = (record: Hit | Message, key: string, render: () => string) => {
    seen.add(key)
    let item = lineCache.get(record)
    if (!item) {
      const line = render()
      item = { line, tokens: tokenizer.count(line), order: 0, key }
      lineCache.set(record, item)
    }
    placed.push({ at: record.createdAt, id: record.id, item: { ...item } })
  }
  const visible = hits.filter((h) => !hidden.has(`${h.kind}:${h.id}`))
  const texts = new NearDuplicates()
  const selected = selectHits(visible, texts)
  for (const h of selected) add(h, `${h.kind}:${h.id}`, () => clamp(`- (${formatTime(h.createdAt)}, ${h.kind}) ${escapeMemoryText(h.text)}`))
  // Neighbours of near-duplicates too: the same question asked twice has two different answers.
  // The nearest of every hit first, then the next ring: a small budget keeps the replies.
  const strong = aboveCliff(visible)
  for (let distance = 1; distance <= NEIGHBOUR_RADIUS; distance++) {
    for (const h of strong) {
      for (const n of neighbours.get(h.id) ?? []) {
        const m = n.message
        const key = `message:${m.id}`
        if (n.distance !== distance || seen.has(key) || !texts.admit(m)) continue
        add(m, key, () => clamp(`- (${formatTime(m.createdAt)}) ${m.role}: ${escapeMemoryText(m.content)}`, NEIGHBOUR_TOKENS))
      }
    }
  }
  const display = [...placed].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  display.forEach((p, i) => {
    p.item.order = i
  })
  return placed.map((p) => p.item)
}
