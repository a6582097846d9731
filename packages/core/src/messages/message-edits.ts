import { MemoryError } from '../store/errors.js'
import { checkContent, countTokens, MAX_META_BYTES, type Message, type MessagesApi, messageDoc, toMessage } from './messages.js'
import type { MessageRow } from '../store/rows.js'
import { messageStamp } from './message-order.js'
import { indexDocs } from '../search/index/index-docs.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkJson, checkOptions, type Json } from '../store/validate.js'
import { write, type WriteScope } from '../store/write.js'

/** What {@link editMessage} takes: the fields to replace (`meta: null` removes it). */
export interface MessageEdit {
  content?: string
  meta?: Json | null
}

/**
 * Loads a live message of a live session inside a write.
 * @throws MemoryError `not_found` for an unknown or deleted message, or one of a purged session.
 */
async function requireMessage(ctx: StoreContext, id: string): Promise<MessageRow> {
  const row = await ctx.db.messages.get(id)
  const session = row && (await ctx.db.sessions.get(row.sessionId))
  if (!row || row.deletedAt !== undefined || !session || session.purged) throw new MemoryError('not_found', `No message with id ${JSON.stringify(id)}`)
  return row
}

/** Stores a changed message at this write's stamp and keeps the search index in step. */
async function storeChanged(ctx: StoreContext, w: WriteScope, row: MessageRow): Promise<void> {
  await ctx.db.messages.put(row)
  if (row.deletedAt === undefined) await indexDocs(ctx.index, w, [messageDoc(row)])
  else await ctx.index.remove(w, `message:${row.id}`)
  w.change('messages', 'put', row.id, row.projectId)
}

/**
 * Replaces a message's content and/or meta. It keeps its id, `seq` and place in
 * the merged order; where conversations sync, the edit travels with its stamp
 * (the latest edit wins on every device).
 * @throws MemoryError `invalid_input` on a bad id or edit, `limit_exceeded` for content over 1 MiB or meta over 64 KiB,
 * `not_found` for an unknown or deleted message.
 */
export async function editMessage(ctx: StoreContext, tables: readonly string[], id: string, edit: MessageEdit): Promise<Message> {
  checkId('id', id)
  const { content, meta } = checkOptions('edit', edit, ['content', 'meta'])
  if (content === undefined && meta === undefined) throw new MemoryError('invalid_input', 'edit needs content or meta')
  if (content !== undefined) checkContent('edit.content', content)
  if (meta !== undefined && meta !== null) checkJson('edit.meta', meta, MAX_META_BYTES)
  const tokens = content === undefined ? undefined : countTokens(ctx, content)
  return write(ctx, tables, async (w) => {
    const row = await requireMessage(ctx, id)
    const next: MessageRow = { ...row, hlc: w.hlc(stampOf(row)) }
    if (content !== undefined) {
      next.content = content
      next.tokens = tokens!
    }
    if (meta === null) delete next.meta
    else if (meta !== undefined) next.meta = structuredClone(meta)
    await storeChanged(ctx, w, next)
    return toMessage(next)
  })
}

/** The stamp an edit of `row` must follow (none for a row of an older version without order key yet). */
const stampOf = (row: MessageRow): string | undefined => (row.hlc === undefined && row.at === undefined ? undefined : messageStamp(row))

/**
 * Deletes a message: a tombstone without content stays (so the deletion reaches
 * other devices and beats older copies); it leaves `tail`, `page` and search.
 * Later messages keep their `seq`.
 * @throws MemoryError `invalid_input` on a bad id, `not_found` for an unknown or deleted message.
 */
export async function deleteMessage(ctx: StoreContext, tables: readonly string[], id: string): Promise<void> {
  checkId('id', id)
  await write(ctx, tables, async (w) => {
    const row = await requireMessage(ctx, id)
    const { meta: _meta, personId: _person, ...rest } = row
    await storeChanged(ctx, w, { ...rest, content: '', tokens: 0, deletedAt: ctx.now(), hlc: w.hlc(stampOf(row)) })
  })
}

/** The edit and delete calls of the messages namespace. */
export function createMessageEdits(ctx: StoreContext): Pick<MessagesApi, 'edit' | 'delete'> {
  const tables = ['sessions', 'messages', ...ctx.index.tables]
  return { edit: (id, edit) => editMessage(ctx, tables, id, edit), delete: (id) => deleteMessage(ctx, tables, id) }
}
