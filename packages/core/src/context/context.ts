import { spreadOverSessions } from './session-spread.js'
import { invalidInput } from '../store/errors.js'
import type { Memory } from '../compose/memory.js'
import { USER_PROJECT, type StoreContext } from '../store/store-context.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { checkId, checkNumber, checkOneOf, checkOptions, checkString, checkTime } from '../store/validate.js'
import { escapeMemoryText, SECTION_SEPARATOR } from './escape.js'
import { fitBudget, SECTION_ORDER, type Draft, type FittedSection } from './fit-budget.js'
import { deepenRecall, neighbourSeeds, recallDepth } from './recall-plan.js'
import { neighbourTurns } from './neighbour-turns.js'
import { clampLine, draftSections, type Gathered } from './section-drafts.js'
import { gatherKnowledge } from './knowledge-section.js'
import { factsViewOf } from './facts-view.js'
import { factCost } from './fact-lines.js'

/** A section of a built context. */
export type SectionName = 'blocks' | 'facts' | 'knowledge' | 'recalled' | 'summaries' | 'observations' | 'recent' | 'lessons' | 'limitations' | 'patterns'
/** What `context.build` returns. */
export interface Context {
  sections: { name: SectionName; text: string; tokens: number; items: number }[]
  text: string
  tokens: number
  omitted: { name: SectionName; items: number; reason: string }[]
}
/** Options of `context.build`. */
export interface BuildContextOptions {
  sessionId?: string
  query?: string
  budget: number
  sections?: SectionName[]
  /** Patterns at or above this confidence make the `patterns` section (default 0.7). */
  patternThreshold?: number
  /** Builds the `knowledge` section as of this time (epoch ms): the relations true then. Default: now. */
  asOf?: number
}
/** Condenses overflowing memory into fewer tokens (app-supplied, e.g. an LLM call). */
export interface Summarizer {
  summarize(texts: string[], maxTokens: number): Promise<string>
}

/** Builds prompts that fit a token budget. */
export interface ContextApi {
  /**
   * Assembles labelled sections — blocks, facts, knowledge (the relations of the
   * entities the query names, true now or `asOf`), recalled, summaries, recent,
   * lessons, always in that order, empty ones left out — whose text counts at
   * most `budget` tokens with the store's tokenizer. The same memory and query
   * give byte-identical text.
   *
   * @example const { text, omitted } = await memory.context.build({ projectId: 'p1', sessionId, query: userText, budget: 4000 })
   * @throws MemoryError `invalid_input` on bad options, `not_found` for an unknown session.
   */
  build(projectId: string, options: BuildContextOptions): Promise<Context>
}

/** The confidence a pattern needs to be in a context, unless `patternThreshold` says otherwise. */
export const PATTERN_THRESHOLD = 0.7
/** Largest budget accepted (tokens). */
export const MAX_BUDGET = 10_000_000
/** Messages of the session read for the recent section. */
const RECENT_WINDOW = 100

/** Creates the context builder of a store; it reads memory through the public namespaces. */
export function createContextBuilder(ctx: StoreContext, memory: Partial<Memory>, summarizer?: Summarizer): ContextApi {
  return {
    async build(projectId, options) {
      checkId('projectId', projectId)
      const opts = checkOptions('options', options, ['sessionId', 'query', 'budget', 'sections', 'patternThreshold', 'asOf'])
      const patternThreshold =
        opts.patternThreshold === undefined ? PATTERN_THRESHOLD : checkNumber('patternThreshold', opts.patternThreshold, { min: 0, max: 1 })
      const sessionId = opts.sessionId === undefined ? undefined : checkId('sessionId', opts.sessionId)
      const query = opts.query === undefined ? undefined : checkString('query', opts.query, { maxLength: 10_000 })
      const budget = checkNumber('budget', opts.budget, { min: 1, max: MAX_BUDGET, integer: true })
      const asOf = opts.asOf === undefined ? undefined : checkTime('asOf', opts.asOf)
      if (opts.sections !== undefined && (!Array.isArray(opts.sections) || opts.sections.length === 0))
        throw invalidInput('sections must be a non-empty array of section names')
      const wanted = new Set(opts.sections?.map((s) => checkOneOf('sections[]', s, SECTION_ORDER)) ?? SECTION_ORDER)
      ctx.assertOpen()

      const [g, knowledge] = await Promise.all([
        gather(ctx, memory, projectId, sessionId, query, wanted, budget, ctx.tokenizer, patternThreshold),
        wanted.has('knowledge') ? gatherKnowledge(memory, projectId, query, asOf ?? ctx.now(), asOf !== undefined) : undefined,
      ])
      if (knowledge) g.knowledge = knowledge
      const tokenizer = ctx.tokenizer
      const maxItem = Math.max(8, Math.floor(budget * 0.4))
      const drafts = (shown: ReadonlySet<string>) => draftSections(g, tokenizer, maxItem, shown).filter((d) => wanted.has(d.name))
      // Pass 1 hides every tail message from recalled; pass 2 only those recent really kept.
      const first = fitBudget(drafts(new Set(g.recent.map((m) => `message:${m.id}`))), budget, tokenizer)
      let draft = drafts(keptKeys(first, 'recent'))
      let fitted = fitBudget(draft, budget, tokenizer)
      const omitted: Context['omitted'] = []

      let summarizerFailed = false
      const recentDropped = fitted.find((s) => s.name === 'recent')?.dropped.length ?? 0
      if (summarizer && recentDropped > 0) {
        const condensed = await condenseRecent(summarizer, g, draft, budget, tokenizer)
        if (condensed.ok) {
          draft = condensed.draft
          fitted = condensed.fitted
          omitted.push({ name: 'recent', items: condensed.summarized, reason: 'summarized' })
          ctx.status.recover('summarizer')
        } else if (condensed.failed !== undefined) {
          ctx.status.fail('summarizer', condensed.failed, projectId)
          summarizerFailed = true
        }
      }
      for (const s of fitted) {
        if (s.dropped.length > 0)
          omitted.push({ name: s.name, items: s.dropped.length, reason: s.name === 'recent' && summarizerFailed ? 'summarizer_failed' : 'over budget' })
      }
      const sections = fitted
        .filter((s) => s.kept.length > 0)
        .map((s) => ({ name: s.name, text: s.text, tokens: s.tokens, items: s.kept.filter((i) => i.key !== SUMMARY_KEY).length }))
      const text = sections.map((s) => s.text).join(SECTION_SEPARATOR)
      return { sections, text, tokens: text ? tokenizer.count(text) : 0, omitted }
    },
  }
}

const SUMMARY_KEY = 'summary:condensed'
/** Facts a context considers per project (the most a page holds). */
const MAX_FACTS = 10_000

function keptKeys(fitted: readonly FittedSection[], name: string): Set<string> {
  return new Set(fitted.find((s) => s.name === name)?.kept.flatMap((i) => (i.key ? [i.key] : [])) ?? [])
}

/** Replaces the recent messages that did not fit with one summarized line at the top of recent. */
async function condenseRecent(summarizer: Summarizer, g: Gathered, draft: Draft[], budget: number, tokenizer: Tokenizer) {
  const reserve = Math.min(400, Math.floor(budget * 0.15))
  if (reserve < 16) return { ok: false as const }
  // Refit without the reserve so the summary has room, then summarize what recent lost.
  const tight = fitBudget(draft, budget - reserve, tokenizer)
  const kept = keptKeys(tight, 'recent')
  const lost = g.recent.filter((m) => !kept.has(`message:${m.id}`))
  if (lost.length === 0) return { ok: false as const }
  let summary: string
  try {
    summary = await summarizer.summarize(
      lost.map((m) => `${m.role}: ${m.content}`),
      reserve - 16,
    )
    if (typeof summary !== 'string' || summary.trim() === '') throw new Error('summarize() returned no text')
  } catch (error) {
    // A failing app summarizer must not fail the prompt: drop instead, and say why (omitted + memory.status).
    return { ok: false as const, failed: error }
  }
  const line = clampLine(`(${lost.length} earlier messages, summarized) ${escapeMemoryText(summary)}`, reserve - 8, tokenizer)
  const next = draft.map((d) => {
    if (d.name !== 'recent') return d
    const items = d.items.filter((i) => i.key !== undefined && kept.has(i.key))
    return { ...d, items: [{ line, tokens: tokenizer.count(line), order: -1, key: SUMMARY_KEY }, ...items] }
  })
  return { ok: true as const, draft: next, fitted: fitBudget(next, budget, tokenizer), summarized: lost.length }
}

async function gather(
  ctx: StoreContext,
  memory: Partial<Memory>,
  projectId: string,
  sessionId: string | undefined,
  query: string | undefined,
  wanted: ReadonlySet<SectionName>,
  budget: number,
  tokenizer: Tokenizer,
  patternThreshold: number,
): Promise<Gathered> {
  const withUser = projectId !== USER_PROJECT
  // Sections whose module the store was composed without are simply empty.
  const { blocks: b, facts: f, search, summaries: s, messages: m, lessons: l, limitations: lim, patterns: pat, observations: obs } = memory
  const has = (name: SectionName) => wanted.has(name)
  const searching = search !== undefined && query !== undefined && query.trim() !== '' && (has('recalled') || has('facts'))
  const now = ctx.now()
  // Expired facts leave the context at once; the sweep purges them later.
  const view = f ? factsViewOf(ctx, async (id) => (await f.list(id, { limit: MAX_FACTS })).items) : undefined
  const allFacts = async (id: string) => (await view!.facts(id)).filter((x) => x.expiresAt === undefined || x.expiresAt > now)
  const depth = recallDepth(budget)
  const [
    blocks,
    userBlocks,
    facts,
    userFacts,
    firstHits,
    userHits,
    projectSummary,
    sessionSummary,
    tail,
    lessons,
    limitations,
    patterns,
    userPatterns,
    observations,
  ] = await Promise.all([
    b && has('blocks') ? b.list(projectId) : [],
    b && has('blocks') && withUser ? b.list(USER_PROJECT) : [],
    f && has('facts') ? allFacts(projectId) : [],
    f && has('facts') && withUser ? allFacts(USER_PROJECT) : [],
    searching ? search(projectId, query!, { limit: depth }) : [],
    searching && f && has('facts') && withUser ? search(USER_PROJECT, query!, { limit: 10, kinds: ['fact'] }) : [],
    s && has('summaries') ? s.latest(projectId, { kind: 'project' }) : undefined,
    s && has('summaries') && sessionId ? s.latest(projectId, { sessionId, kind: 'session' }) : undefined,
    m && has('recent') && sessionId ? m.tail(sessionId, RECENT_WINDOW) : [],
    l && has('lessons') ? l.list(projectId) : [],
    lim && has('limitations') ? lim.open() : [],
    pat && has('patterns') ? pat.list(projectId, { minConfidence: patternThreshold }) : [],
    pat && has('patterns') && withUser ? pat.list(USER_PROJECT, { minConfidence: patternThreshold }) : [],
    obs && has('observations') && sessionId ? obs.list(sessionId) : [],
  ])
  // A session with observations: they stand for its older messages, the recent section is the raw tail after them.
  const through = observations.length === 0 ? 0 : await observedSeq(ctx, observations)
  const recent = tail.filter((msg) => msg.seq > through)
  // What the other sections could take; recalled may grow into the rest.
  const count = (text: string) => tokenizer.count(text) + 4
  const others =
    [...blocks, ...userBlocks].reduce((n, x) => n + count(x.value), 0) +
    [...facts, ...userFacts].reduce((n, x) => n + factCost(x, tokenizer), 0) +
    recent.reduce((n, x) => n + count(x.content), 0) +
    lessons.reduce((n, x) => n + count(x.rule), 0) +
    (projectSummary ? count(projectSummary.text) : 0) +
    (sessionSummary ? count(sessionSummary.text) : 0)
  const deep =
    searching && has('recalled') ? await deepenRecall((limit) => search(projectId, query!, { limit }), firstHits, depth, budget - others, tokenizer) : firstHits
  // A question about several events draws from several sessions (session-spread.ts).
  const hits = searching ? spreadOverSessions(query!, deep) : deep
  return {
    projectId,
    blocks: [...userBlocks, ...blocks],
    facts: [...userFacts, ...facts],
    hits: [...hits, ...userHits],
    summaries: [projectSummary, sessionSummary].filter((s): s is NonNullable<typeof s> => s !== undefined),
    recent,
    lessons,
    limitations,
    patterns: [...userPatterns, ...patterns],
    observations,
    neighbours: m && has('recalled') ? await neighbourTurns(ctx, neighbourSeeds(hits.filter((h) => h.kind !== 'fact'))) : new Map(),
  }
}

/** The local seq of the last message the observations cover. */
async function observedSeq(ctx: StoreContext, observations: readonly { throughMessageId: string }[]): Promise<number> {
  const rows = await ctx.db.messages.bulkGet([...new Set(observations.map((o) => o.throughMessageId))])
  return rows.reduce((n, row) => Math.max(n, row?.seq ?? 0), 0)
}
