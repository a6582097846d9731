import { checkSource } from './facts-input.js'
import { newId } from './ids.js'
import { requireProject } from './projects.js'
import type { PassageRow, Source } from './schema.js'
import type { StoreContext } from './store-context.js'
import { checkId, checkOptions, checkString, checkTags } from './validate.js'
import { write } from './write.js'

/** An archive passage (long-term recall memory). */
export interface Passage { id: string; projectId: string; text: string; source?: Source; tags: string[]; createdAt: number }

/** The archive of passages: long texts recalled by search, never shown whole unless they match. */
export interface ArchiveApi {
  /**
   * Stores a passage and indexes it (full text now, embedding in the background when an embedder is set).
   *
   * @example await memory.archive.insert('p1', 'The deploy runbook: …', { source: { tool: 'docs' }, tags: ['ops'] })
   * @throws MemoryError `invalid_input` on an empty text or bad options, `limit_exceeded` over
   * {@link MAX_PASSAGE_LENGTH} characters, `not_found` for an unknown or archived project.
   */
  insert(projectId: string, text: string, options?: { source?: Source; tags?: string[] }): Promise<Passage>
  /**
   * Deletes a passage, its postings and its vector.
   * @returns true when it existed. @throws MemoryError `invalid_input` on a bad id.
   */
  remove(id: string): Promise<boolean>
}

/** Longest passage accepted (characters). */
export const MAX_PASSAGE_LENGTH = 200_000

/** Creates the archive namespace of a store. */
export function createArchive(ctx: StoreContext): ArchiveApi {
  const tables = ['projects', 'passages', ...ctx.index.tables]
  return {
    async insert(projectId, text, options) {
      checkId('projectId', projectId)
      checkString('text', text, { nonEmpty: true, maxLength: MAX_PASSAGE_LENGTH })
      const opts = checkOptions('options', options)
      const source = checkSource(opts.source)
      const tags = checkTags(opts.tags)
      return write(ctx, tables, async (w) => {
        await requireProject(ctx, projectId)
        const createdAt = ctx.now()
        const row: PassageRow = { id: newId(createdAt), projectId, text, tags, createdAt }
        if (source) row.source = source
        await ctx.db.passages.add(row)
        await ctx.index.put(w, { docId: `passage:${row.id}`, kind: 'passage', projectId, text, createdAt })
        w.change('passages', 'put', row.id, projectId)
        return { ...row }
      })
    },
    async remove(id) {
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

