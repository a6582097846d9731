import { MemoryError } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { checkOptions, checkString } from '../store/validate.js'
import { read, write } from '../store/write.js'

/** Something the agent knows it cannot do yet, and how it plans to get there. */
export interface Limitation {
  title: string
  description?: string
  plan?: string
  status: 'open' | 'resolved'
  createdAt: number
  updatedAt: number
  resolvedAt?: number
}

/** What {@link LimitationsApi.store} takes. */
export interface LimitationInput {
  title: string
  description?: string
  plan?: string
}

/** A stored limitation; `key` is the folded title, its identity. */
interface LimitationRow extends Limitation {
  key: string
}

/** Longest title (characters). */
export const MAX_LIMITATION_TITLE = 200
/** Longest description or plan (characters). */
export const MAX_LIMITATION_TEXT = 10_000
/** Most open limitations a store holds: `open()` returns them all, so they stay few. */
export const MAX_OPEN_LIMITATIONS = 1_000

const TABLES = ['limitations']

/**
 * The agent's known limitations, store-wide (not per project): what it cannot
 * do yet. Titles are their identity, compared without case.
 */
export interface LimitationsApi {
  /**
   * Stores a limitation, or updates the one with the same title compared without case
   * and surrounding or repeated spaces (its description and plan are replaced when given;
   * a resolved one is opened again). `isNew` says whether no such title was stored.
   * @example const { isNew } = await memory.limitations.store({ title: 'Cannot read PDFs', plan: 'Add a PDF tool' })
   * @throws MemoryError `invalid_input` (empty title, unknown field), `limit_exceeded` (title over 200
   * characters, description or plan over 10,000, more than 1,000 open limitations).
   */
  store(limitation: LimitationInput): Promise<{ limitation: Limitation; isNew: boolean }>
  /** Open limitations, oldest first. */
  open(): Promise<Limitation[]>
  /**
   * Marks the limitation with this title (compared as in `store`) resolved.
   * @returns true when an open limitation was resolved; false when none is stored or it was already resolved.
   * @throws MemoryError `invalid_input` (empty title), `limit_exceeded` (title over 200 characters).
   */
  resolve(title: string): Promise<boolean>
}

/** The identity of a title: NFKC, lower case, spaces collapsed. */
export function limitationKey(title: string): string {
  return title.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim()
}

function checkTitle(value: unknown): string {
  return checkString('title', value, { nonEmpty: true, maxLength: MAX_LIMITATION_TITLE }).trim()
}

/** Creates the limitations namespace of a store. */
export function createLimitations(ctx: StoreContext): LimitationsApi {
  const table = () => ctx.db.table<LimitationRow, string>('limitations')
  return {
    async store(limitation) {
      const input = checkOptions('limitation', limitation, ['title', 'description', 'plan'])
      const title = checkTitle(input.title)
      const description = input.description === undefined ? undefined : checkString('description', input.description, { maxLength: MAX_LIMITATION_TEXT })
      const plan = input.plan === undefined ? undefined : checkString('plan', input.plan, { maxLength: MAX_LIMITATION_TEXT })
      const key = limitationKey(title)
      return write(ctx, TABLES, async (w) => {
        const now = ctx.now()
        const stored = await table().get(key)
        if (stored?.status !== 'open' && (await table().where('status').equals('open').count()) >= MAX_OPEN_LIMITATIONS) {
          throw new MemoryError('limit_exceeded', `There are already ${MAX_OPEN_LIMITATIONS} open limitations; resolve some first`)
        }
        const row: LimitationRow = stored ? { ...stored, status: 'open', updatedAt: now } : { key, title, status: 'open', createdAt: now, updatedAt: now }
        delete row.resolvedAt
        if (description !== undefined) row.description = description
        if (plan !== undefined) row.plan = plan
        await table().put(row)
        w.change('limitations', 'put', key, '')
        return { limitation: toLimitation(row), isNew: stored === undefined }
      })
    },

    async open() {
      const rows = await read(ctx, TABLES, () => table().where('status').equals('open').toArray())
      return rows.sort((a, b) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : 1)).map(toLimitation)
    },

    async resolve(title) {
      const key = limitationKey(checkTitle(title))
      return write(ctx, TABLES, async (w) => {
        const stored = await table().get(key)
        if (stored?.status !== 'open') return false
        const now = ctx.now()
        await table().put({ ...stored, status: 'resolved', resolvedAt: now, updatedAt: now })
        w.change('limitations', 'put', key, '')
        return true
      })
    },
  }
}

function toLimitation(row: LimitationRow): Limitation {
  const { key: _key, ...limitation } = row
  return limitation
}
