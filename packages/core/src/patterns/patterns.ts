import { invalidInput, MemoryError } from '../store/errors.js'
import { requireProject } from '../projects/projects.js'
import { normaliseText } from '../runtime/normalise-text.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkLimit, checkNumber, checkOptions, checkString } from '../store/validate.js'
import { wellFormedText } from '../store/well-formed-text.js'
import { read, write } from '../store/write.js'

/** Something the agent noticed the user tends to do, and how sure it is. */
export interface Pattern {
  /** `encodeURIComponent(projectId) + '/' + encodeURIComponent(normalised text)`: the same pattern on two devices is one record. */
  id: string
  projectId: string
  /** The wording of the latest observation. */
  text: string
  /** In [0, 1]; raised by every observation (see {@link reinforce}). */
  confidence: number
  /** How many observations made it (on this device, or merged from the latest device to write it). */
  observations: number
  createdAt: number
  updatedAt: number
}

/** A stored pattern: `hlc` orders writes across devices; `deletedAt` is reserved for tombstones. */
export interface PatternRow extends Pattern {
  hlc: string
  deletedAt?: number
}

/** Options of {@link PatternsApi.observe}. */
export interface ObservePatternOptions {
  /** How strongly this one observation suggests the pattern, in [0, 1]. Default 0.5. */
  confidence?: number
}
/** Options of {@link PatternsApi.list}. */
export interface ListPatternsOptions {
  /** Only patterns at or above this confidence. Default 0. */
  minConfidence?: number
  /** At most this many (default 100, 1–1,000). */
  limit?: number
}

/** Longest pattern text (characters). */
export const MAX_PATTERN_TEXT = 2_000
/** Most patterns a project holds (`list` returns the most confident ones). */
export const MAX_PATTERNS_PER_PROJECT = 10_000
/** The confidence of one observation when the caller gives none. */
export const DEFAULT_OBSERVATION_CONFIDENCE = 0.5

const TABLES = ['patterns', 'projects']

/** Patterns the agent has observed, per project; they sync like facts. */
export interface PatternsApi {
  /**
   * Records one observation of a pattern. Texts that normalise to the same words (case,
   * Unicode form, punctuation and spacing ignored) are one pattern: a new one starts at the
   * observation's confidence; an existing one is reinforced with
   * `confidence ← 1 − (1 − confidence) × (1 − c)` and keeps the latest wording.
   * @example await memory.patterns.observe('user', 'Orders coffee on Monday mornings', { confidence: 0.6 })
   * @throws MemoryError `invalid_input` (bad project id, text without letters or digits, confidence outside
   * [0, 1], unknown option), `limit_exceeded` (text over 2,000 characters, a 10,001st pattern), `not_found`
   * (unknown or archived project).
   */
  observe(projectId: string, text: string, options?: ObservePatternOptions): Promise<Pattern>
  /**
   * The project's patterns at or above `minConfidence`, most confident first (ties: most
   * recently observed, then id). An unknown project has none.
   * @throws MemoryError `invalid_input`.
   */
  list(projectId: string, options?: ListPatternsOptions): Promise<Pattern[]>
  /**
   * Forgets a pattern (the one `text` normalises to): a tombstone, so the delete syncs; a later
   * observation starts it afresh. @returns false when there was none.
   * @throws MemoryError `invalid_input`, `limit_exceeded` (text over 2,000 characters).
   */
  delete(projectId: string, text: string): Promise<boolean>
}

/** The id of the pattern a text names in a project. */
export function patternId(projectId: string, normalised: string): string {
  return `${encodeURIComponent(projectId)}/${encodeURIComponent(normalised)}`
}

/**
 * The update rule: each observation is independent evidence (noisy-OR), so
 * confidence only grows, never past 1, and two observations of 0.5 make 0.75.
 */
export function reinforce(confidence: number, observation: number): number {
  return 1 - (1 - confidence) * (1 - observation)
}

/** The normalised form of a pattern text. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function normalisePattern(text: unknown): { text: string; norm: string } {
  // The text names the pattern (its id is made of it): made well-formed (a lone surrogate as U+FFFD,
  // what every other device would get) before the id is, as every synced text is stored.
  const t = wellFormedText(checkString('text', text, { nonEmpty: true, maxLength: MAX_PATTERN_TEXT }).trim())
  const norm = normaliseText(t)
  if (norm === '') throw invalidInput(`A pattern needs letters or digits, got ${JSON.stringify(t)}`)
  return { text: t, norm }
}

/** The public shape of a stored pattern. */
export function toPattern(row: PatternRow): Pattern {
  const { hlc: _hlc, deletedAt: _deleted, ...pattern } = row
  return pattern
}

/** Creates the patterns namespace of a store. */
export function createPatterns(ctx: StoreContext): PatternsApi {
  const table = () => ctx.db.table<PatternRow, string>('patterns')
  return {
    async observe(projectId, text, options) {
      checkId('projectId', projectId)
      const pattern = normalisePattern(text)
      const o = checkOptions('options', options, ['confidence'])
      const c = o.confidence === undefined ? DEFAULT_OBSERVATION_CONFIDENCE : checkNumber('confidence', o.confidence, { min: 0, max: 1 })
      const id = patternId(projectId, pattern.norm)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const stored = await table().get(id)
        const live = stored?.deletedAt === undefined ? stored : undefined
        if (
          !live &&
          (await table()
            .where('projectId')
            .equals(projectId)
            .filter((r) => r.deletedAt === undefined)
            .count()) >= MAX_PATTERNS_PER_PROJECT
        ) {
          throw new MemoryError('limit_exceeded', `Project ${JSON.stringify(projectId)} already holds ${MAX_PATTERNS_PER_PROJECT} patterns`)
        }
        const now = ctx.now()
        const row: PatternRow = live
          ? {
              ...live,
              text: pattern.text,
              confidence: reinforce(live.confidence, c),
              observations: live.observations + 1,
              updatedAt: now,
              hlc: w.hlc(stored?.hlc),
            }
          : { id, projectId, text: pattern.text, confidence: c, observations: 1, createdAt: now, updatedAt: now, hlc: w.hlc(stored?.hlc) }
        delete row.deletedAt
        await table().put(row)
        w.change('patterns', 'put', id, projectId)
        return toPattern(row)
      })
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['minConfidence', 'limit'])
      const min = o.minConfidence === undefined ? 0 : checkNumber('minConfidence', o.minConfidence, { min: 0, max: 1 })
      const limit = checkLimit('limit', o.limit, 100, 1_000)
      const rows = await read(ctx, ['patterns'], () =>
        table().where('[projectId+confidence]').between([projectId, min], [projectId, Infinity], true, true).toArray(),
      )
      return rows
        .filter((r) => r.deletedAt === undefined)
        .sort((a, b) => b.confidence - a.confidence || b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(toPattern)
    },

    async delete(projectId, text) {
      checkId('projectId', projectId)
      const id = patternId(projectId, normalisePattern(text).norm)
      return write(ctx, ['patterns'], async (w) => {
        const stored = await table().get(id)
        if (!stored || stored.deletedAt !== undefined) return false
        const now = ctx.now()
        await table().put({ ...stored, deletedAt: now, updatedAt: now, hlc: w.hlc(stored.hlc) })
        w.change('patterns', 'delete', id, projectId)
        return true
      })
    },
  }
}
