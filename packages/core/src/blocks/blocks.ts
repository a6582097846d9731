import { Dexie } from 'dexie'
import { blockId, DEFAULT_BLOCK_LIMIT, MAX_BLOCK_DESCRIPTION, MAX_BLOCK_LIMIT } from './block-rules.js'
import { maxKey } from '../store/keys.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { requireProject } from '../projects/projects.js'
import type { BlockRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkNumber, checkOptionalString, checkOptions, checkString, describe } from '../store/validate.js'
import { read, readOne, write, type WriteScope } from '../store/write.js'

/** A MemGPT-style core block: labelled text with a character limit. */
export interface Block {
  projectId: string
  label: string
  value: string
  limit: number
  description?: string
  readOnly: boolean
  updatedAt: number
}
/** Options of {@link BlocksApi.set}. */
export interface SetBlockOptions {
  limit?: number
  description?: string
  readOnly?: boolean
}

/** Core blocks of a project. */
export interface BlocksApi {
  /** The block, or undefined when missing or deleted. @throws MemoryError `invalid_input`. */
  get(projectId: string, label: string): Promise<Block | undefined>
  /**
   * Creates or replaces a block. Omitted options keep the block's current ones (new block:
   * limit 2000, not read-only). A read-only block's value changes only when the call passes
   * `readOnly` explicitly (`false` unlocks it, `true` rewrites it and keeps it locked).
   * @throws MemoryError `invalid_input`, `limit_exceeded` (value longer than the limit),
   * `read_only`, `not_found` (unknown or archived project).
   */
  set(projectId: string, label: string, value: string, options?: SetBlockOptions): Promise<Block>
  /**
   * Adds `text` on a new line: joined with `\n`, unless the block is empty or already ends
   * with a newline (creates the block with default settings when missing).
   * @throws MemoryError `invalid_input` (empty text), `limit_exceeded`, `read_only`, `not_found` (project).
   */
  append(projectId: string, label: string, text: string): Promise<Block>
  /**
   * Replaces the first exact occurrence of `oldText`; false when the block or the text is missing.
   * @throws MemoryError `invalid_input` (empty oldText), `limit_exceeded`, `read_only`, `not_found` (project).
   */
  replace(projectId: string, label: string, oldText: string, newText: string): Promise<boolean>
  /** Deletes a block (read-only ones too); true if it existed. @throws MemoryError `invalid_input`, `not_found` (project). */
  delete(projectId: string, label: string): Promise<boolean>
  /** The project's blocks ordered by label. @throws MemoryError `invalid_input`. */
  list(projectId: string): Promise<Block[]>
}

/** Creates the blocks namespace of a store. */
export function createBlocks(ctx: StoreContext): BlocksApi {
  const { db } = ctx
  const TABLES = ['projects', 'blocks']

  /** The live (not tombstoned) stored block. */
  async function live(projectId: string, label: string): Promise<BlockRow | undefined> {
    return liveOf(await db.blocks.get([projectId, label]))
  }
  const liveOf = (row: BlockRow | undefined): BlockRow | undefined => (row && row.deletedAt === undefined ? row : undefined)

  async function store(w: WriteScope, row: BlockRow): Promise<Block> {
    await db.blocks.put(row)
    w.change('blocks', row.deletedAt === undefined ? 'put' : 'delete', blockId(row.projectId, row.label), row.projectId)
    return toBlock(row)
  }

  /** The next state of a block; `replaces` is the stamp of the stored row (a tombstone too), which the write must follow. */
  function next(
    current: BlockRow | undefined,
    w: WriteScope,
    changes: Partial<BlockRow> & { projectId: string; label: string; value: string },
    replaces = current?.hlc,
  ): BlockRow {
    const row: BlockRow = {
      limit: DEFAULT_BLOCK_LIMIT,
      readOnly: false,
      ...current,
      ...changes,
      updatedAt: ctx.now(),
      hlc: w.hlc(replaces),
    }
    if (row.description === undefined || row.description === '') delete row.description
    delete row.deletedAt
    if (row.value.length > row.limit) {
      throw new MemoryError(
        'limit_exceeded',
        `Block ${JSON.stringify(row.label)} would hold ${row.value.length} characters, more than its limit of ${row.limit}; shorten the text, make room with blocks.replace(), or raise the limit with blocks.set(projectId, label, value, { limit })`,
      )
    }
    return row
  }

  return {
    async get(projectId, label) {
      checkId('projectId', projectId)
      checkId('label', label)
      const row = await readOne(ctx, () => live(projectId, label))
      return row && toBlock(row)
    },

    async set(projectId, label, value, options) {
      checkId('projectId', projectId)
      checkId('label', label)
      checkString('value', value)
      const o = checkOptions('options', options, ['limit', 'description', 'readOnly'])
      const limit = o.limit === undefined ? undefined : checkNumber('limit', o.limit, { min: 1, max: MAX_BLOCK_LIMIT, integer: true })
      const description = checkOptionalString('description', o.description, MAX_BLOCK_DESCRIPTION)
      if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean') throw invalidInput(`readOnly must be a boolean, got ${describe(o.readOnly)}`)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const stored = await db.blocks.get([projectId, label])
        const current = liveOf(stored)
        if (current?.readOnly && o.readOnly === undefined && current.value !== value) throw readOnlyError(label, 'set')
        return store(
          w,
          next(
            current,
            w,
            {
              projectId,
              label,
              value,
              ...(limit !== undefined ? { limit } : {}),
              ...(description !== undefined ? { description } : {}),
              ...(o.readOnly !== undefined ? { readOnly: o.readOnly } : {}),
            },
            stored?.hlc,
          ),
        )
      })
    },

    async append(projectId, label, text) {
      checkId('projectId', projectId)
      checkId('label', label)
      if (checkString('text', text).length === 0) throw invalidInput('text to append must not be empty')
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const stored = await db.blocks.get([projectId, label])
        const current = liveOf(stored)
        if (current?.readOnly) throw readOnlyError(label, 'append to')
        const base = current?.value ?? ''
        // On a new line: joined with '\n' unless the block is empty or already ends with one.
        return store(w, next(current, w, { projectId, label, value: base === '' || base.endsWith('\n') ? base + text : `${base}\n${text}` }, stored?.hlc))
      })
    },

    async replace(projectId, label, oldText, newText) {
      checkId('projectId', projectId)
      checkId('label', label)
      if (checkString('oldText', oldText).length === 0) throw invalidInput('oldText must not be empty')
      checkString('newText', newText)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const current = await live(projectId, label)
        if (!current) return false
        if (current.readOnly) throw readOnlyError(label, 'replace text in')
        const at = current.value.indexOf(oldText)
        if (at < 0) return false
        const value = current.value.slice(0, at) + newText + current.value.slice(at + oldText.length)
        await store(w, next(current, w, { projectId, label, value }))
        return true
      })
    },

    async delete(projectId, label) {
      checkId('projectId', projectId)
      checkId('label', label)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        const current = await live(projectId, label)
        if (!current) return false
        const now = ctx.now()
        // A tombstone, so sync can replicate the delete; the text itself is dropped.
        const tombstone: BlockRow = {
          projectId,
          label,
          value: '',
          limit: current.limit,
          readOnly: current.readOnly,
          updatedAt: now,
          deletedAt: now,
          hlc: w.hlc(current.hlc),
        }
        await store(w, tombstone)
        return true
      })
    },

    async list(projectId) {
      checkId('projectId', projectId)
      const rows = await read(ctx, ['blocks'], () => db.blocks.where('[projectId+label]').between([projectId, Dexie.minKey], [projectId, maxKey()]).toArray())
      return rows.filter((r) => r.deletedAt === undefined).map(toBlock)
    },
  }
}

function readOnlyError(label: string, verb: string): MemoryError {
  return new MemoryError('read_only', `Cannot ${verb} the read-only block ${JSON.stringify(label)}; set it with { readOnly: false } first`)
}

function toBlock(row: BlockRow): Block {
  const block: Block = { projectId: row.projectId, label: row.label, value: row.value, limit: row.limit, readOnly: row.readOnly, updatedAt: row.updatedAt }
  if (row.description !== undefined) block.description = row.description
  return block
}
