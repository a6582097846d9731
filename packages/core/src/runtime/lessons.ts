import { Dexie, type Table } from 'dexie'
import { maxKey } from '../store/keys.js'
import { requireProject } from '../projects/projects.js'
import type { Source } from '../store/rows.js'
import { USER_PROJECT, type StoreContext } from '../store/store-context.js'
import { DEFAULT_PAGE_SIZE, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkId, checkLimit, checkNumber, checkOptions, checkString } from '../store/validate.js'
import { read, write } from '../store/write.js'
import { normaliseText } from './normalise-text.js'

/** A distilled lesson. */
export interface Lesson {
  projectId: string
  domain: string
  rule: string
  occurrences: number
  createdAt: number
  updatedAt: number
}
/** A scored outcome, as recorded. */
export interface Outcome {
  seq: number
  projectId: string
  domain: string
  score: number
  lesson: string
  source?: Source
  at: number
}

/** What {@link LessonsApi.appendOutcome} takes. */
export interface OutcomeInput {
  domain: string
  score: number
  lesson: string
  source?: Source
}
/** Options of {@link LessonsApi.outcomes}. */
export interface ListOutcomesOptions extends PageOptions<number> {
  domain?: string
}

/** A stored lesson: `key` is the normalised rule, `touched` orders lessons stored in the same millisecond. */
interface LessonRow extends Lesson {
  key: string
  touched: number
}

/** Lessons kept per (project, domain); storing another evicts the least recently stored. */
export const MAX_LESSONS_PER_DOMAIN = 10
const MAX_RULE = 2_000
const MAX_LESSON = 10_000
const TABLES = ['lessons', 'outcomes', 'projects']

/** Outcomes and lessons learned. */
export interface LessonsApi {
  /** Appends a scored outcome with the lesson the agent drew from it. @throws MemoryError `invalid_input`, `not_found` (project). */
  appendOutcome(projectId: string, outcome: OutcomeInput): Promise<Outcome>
  /**
   * Stores a lesson rule. The same rule (compared normalised: case, punctuation, spacing)
   * bumps `occurrences` and takes the new wording; a (project, domain) keeps the newest
   * 10 lessons, evicting the one stored longest ago.
   * @throws MemoryError `invalid_input`, `limit_exceeded` (rule over 2,000 characters), `not_found` (project).
   */
  create(projectId: string, domain: string, rule: string): Promise<Lesson>
  /**
   * The project's lessons, then the user's (project `user`); within each, most occurrences
   * first, then most recently stored. @throws MemoryError `invalid_input`.
   */
  list(projectId: string, options?: { domain?: string }): Promise<Lesson[]>
  /** Recorded outcomes of a project, newest first, one page (cursor: the last seq). @throws MemoryError `invalid_input`. */
  outcomes(projectId: string, options?: ListOutcomesOptions): Promise<Page<Outcome, number>>
}

/** The change-feed id of a lesson: `<domain>:<normalised rule>`. */
export function lessonChangeId(domain: string, key: string): string {
  return `${domain}:${key}`
}

/** Creates the lessons namespace of a store. */
export function createLessons(ctx: StoreContext): LessonsApi {
  const lessons = (): Table<LessonRow, [string, string, string]> => ctx.db.table<LessonRow, [string, string, string]>('lessons')
  const outcomes = (): Table<Outcome, number> => ctx.db.table<Outcome, number>('outcomes')

  async function ofProject(projectId: string, domain: string | undefined): Promise<Lesson[]> {
    const rows = await lessons().where('projectId').equals(projectId).toArray()
    return rows
      .filter((r) => domain === undefined || r.domain === domain)
      .sort((a, b) => b.occurrences - a.occurrences || b.updatedAt - a.updatedAt || b.touched - a.touched)
      .map(toLesson)
  }

  return {
    async appendOutcome(projectId, outcome) {
      checkId('projectId', projectId)
      const o = checkOptions('outcome', outcome, ['domain', 'score', 'lesson', 'source'])
      const domain = checkId('domain', o.domain)
      const score = checkNumber('score', o.score)
      const lesson = checkString('lesson', o.lesson, { maxLength: MAX_LESSON })
      const source = checkSource(o.source)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const row: Omit<Outcome, 'seq'> & { seq?: number } = { projectId, domain, score, lesson, at: ctx.now() }
        if (source !== undefined) row.source = source
        const seq = await outcomes().add(row as Outcome)
        w.change('lessons', 'put', `outcome:${seq}`, projectId)
        return { ...row, seq }
      })
    },

    async create(projectId, domain, rule) {
      checkId('projectId', projectId)
      checkId('domain', domain)
      const text = checkString('rule', rule, { nonEmpty: true, maxLength: MAX_RULE }).trim()
      const key = normaliseText(text) || text
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const now = ctx.now()
        const inDomain = await lessons().where('[projectId+domain+key]').between([projectId, domain, ''], [projectId, domain, maxKey()]).toArray()
        const touched = Math.max(0, ...inDomain.map((r) => r.touched)) + 1
        const existing = inDomain.find((r) => r.key === key)
        const row: LessonRow = existing
          ? { ...existing, rule: text, occurrences: existing.occurrences + 1, updatedAt: now, touched }
          : { projectId, domain, rule: text, key, occurrences: 1, createdAt: now, updatedAt: now, touched }
        await lessons().put(row)
        w.change('lessons', 'put', lessonChangeId(domain, key), projectId)
        const kept = [...inDomain.filter((r) => r.key !== key), row].sort((a, b) => b.touched - a.touched)
        for (const evicted of kept.slice(MAX_LESSONS_PER_DOMAIN)) {
          await lessons().delete([projectId, domain, evicted.key])
          w.change('lessons', 'delete', lessonChangeId(domain, evicted.key), projectId)
        }
        return toLesson(row)
      })
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['domain'])
      const domain = o.domain === undefined ? undefined : checkId('domain', o.domain)
      return read(ctx, TABLES, async () => {
        const own = await ofProject(projectId, domain)
        return projectId === USER_PROJECT ? own : [...own, ...(await ofProject(USER_PROJECT, domain))]
      })
    },

    async outcomes(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['domain', 'after', 'limit'])
      const domain = o.domain === undefined ? undefined : checkId('domain', o.domain)
      const after = o.after === undefined ? Infinity : checkNumber('options.after', o.after, { min: 0, integer: true })
      const limit = checkLimit('options.limit', o.limit, DEFAULT_PAGE_SIZE)
      const rows = await read(ctx, TABLES, () =>
        domain === undefined
          ? outcomes().where('[projectId+domain]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray()
          : outcomes().where('[projectId+domain]').equals([projectId, domain]).toArray(),
      )
      return pageFrom(
        rows
          .filter((r) => r.seq < after)
          .sort((a, b) => b.seq - a.seq)
          .slice(0, limit + 1),
        limit,
        (r) => r.seq,
      )
    },
  }
}

function checkSource(value: unknown): Source | undefined {
  if (value === undefined) return undefined
  const s = checkOptions('source', value as Source, ['sessionId', 'messageId', 'tool', 'note'])
  const out: Source = {}
  for (const field of ['sessionId', 'messageId', 'tool', 'note'] as const) {
    if (s[field] !== undefined)
      out[field] = field === 'note' ? checkString('source.note', s[field], { maxLength: MAX_LESSON }) : checkId(`source.${field}`, s[field])
  }
  return out
}

function toLesson(row: LessonRow): Lesson {
  const { key: _key, touched: _touched, ...lesson } = row
  return lesson
}
