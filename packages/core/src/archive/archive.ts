import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { checkSource } from '../facts/facts-input.js'
import { newId } from '../store/ids.js'
import { requireProject } from '../projects/projects.js'
import type { PassageRow, Source } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkOptions, checkString, checkTags, checkTime } from '../store/validate.js'
import { read, readOne, write } from '../store/write.js'

/** An archive passage (long-term recall memory). */
export interface Passage {
  id: string
  projectId: string
  text: string
  source?: Source
  tags: string[]
  createdAt: number
}

/** The archive of passages: long texts recalled by search, never shown whole unless they match. */
export interface ArchiveApi {
  /**
   * Stores a passage and indexes it (full text now, embedding in the background when an embedder is set).
   *
   * @example await memory.archive.create('p1', 'The deploy runbook: …', { source: { tool: 'docs' }, tags: ['ops'] })
   * @throws MemoryError `invalid_input` on an empty text or bad options, `limit_exceeded` over
   * {@link MAX_PASSAGE_LENGTH} characters, `not_found` for an unknown or archived project.
   */
  create(projectId: string, text: string, options?: CreatePassageOptions): Promise<Passage>
  /** The passage, or undefined. @throws MemoryError `invalid_input` on a bad id. */
  get(id: string): Promise<Passage | undefined>
  /** Passages of a project, newest first, one page. @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: PageOptions): Promise<Page<Passage>>
  /**
   * Deletes a passage, its postings and its vector.
   * @returns true when it existed. @throws MemoryError `invalid_input` on a bad id.
   */
  delete(id: string): Promise<boolean>
}

/** Options of {@link ArchiveApi.create}. */
export interface CreatePassageOptions {
  source?: Source
  tags?: string[]
  /** After this time (epoch ms) the passage leaves search and `context.build`, and a background sweep deletes it. */
  expiresAt?: number
}

/** Longest passage accepted (characters). */
export const MAX_PASSAGE_LENGTH = 200_000

/** Creates the archive namespace of a store. */
export function createArchive(ctx: StoreContext): ArchiveApi {
  const tables = ['projects', 'passages', ...ctx.index.tables]
  return {
    async create(projectId, text, options) {
      checkId('projectId', projectId)
      checkString('text', text, { nonEmpty: true, maxLength: MAX_PASSAGE_LENGTH })
      const opts = checkOptions('options', options, ['source', 'tags', 'expiresAt'])
      const expiresAt = opts.expiresAt === undefined ? undefined : checkTime('expiresAt', opts.expiresAt)
      const source = checkSource(opts.source)
      const tags = checkTags(opts.tags)
      return write(ctx, tables, async (w) => {
        await requireProject(ctx, projectId)
        const createdAt = ctx.now()
        const row: PassageRow = { id: newId(createdAt), projectId, text, tags, createdAt }
        if (source) row.source = source
        if (expiresAt !== undefined) row.expiresAt = expiresAt
        await ctx.db.passages.add(row)
        await ctx.index.put(w, { docId: `passage:${row.id}`, kind: 'passage', projectId, text, createdAt })
        w.change('passages', 'put', row.id, projectId)
        return { ...row }
      })
    },
    async get(id) {
      checkId('id', id)
      return readOne(ctx, () => ctx.db.passages.get(id))
    },
    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkPageOptions(options, [])
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      const rows = await read(ctx, ['passages'], () =>
        ctx.db.passages
          .where('[projectId+createdAt]')
          .between([projectId, Dexie.minKey], [projectId, maxKey()])
          .reverse()
          .filter((r) => isAfterDescending(r.createdAt, r.id, cursor))
          .limit(o.limit + 1)
          .toArray(),
      )
      return pageFrom(rows, o.limit, (r) => encodeCursor(r.createdAt, r.id))
    },
    async delete(id) {
      checkId('id', id)
      return write(ctx, tables, async (w) => {
        const row = await ctx.db.passages.get(id)
        if (!row) return false
        await ctx.db.passages.delete(id)
        await ctx.index.remove(w, `passage:${id}`)
        w.change('passages', 'delete', id, row.projectId)
        return true
      })
    },
  }
}
