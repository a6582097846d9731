import { Dexie } from 'dexie'
import { raisedLastAt, restorable } from '../store/stamp-restore.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { maxKey } from '../store/keys.js'
import { isOrderKey, messagesOf, messageStamp, stampOfOrder } from './message-order.js'
import { checkContent, MAX_META_BYTES, messageDoc, ROLES } from './messages.js'
import type { MessageRow, SessionRow } from '../store/rows.js'
import { indexDocs } from '../search/index/index-docs.js'
import type { StoreContext } from '../store/store-context.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkJson, checkNumber, checkOneOf, checkTime } from '../store/validate.js'

const FIELDS = ['id', 'sessionId', 'projectId', 'role', 'content', 'tokens', 'createdAt', 'meta', 'personId', 'at', 'hlc', 'deletedAt'] as const

/**
 * Messages as sync mirrors them (projects with `sync.messages`), one document
 * per session. Append-only: a message travels with its stable id and its order
 * key `at` (message-order.ts); a later record of the same id (an edit, or a
 * deletion's content-free tombstone) wins by HLC and keeps the message's place
 * and local `seq`. A message that arrives
 * gets this device's next `seq` for its session, is indexed for search (and
 * queued for embedding) like a local append, and moves the session's
 * `lastActiveAt`. A message of a purged session is dropped; one that arrives
 * before its session gets a placeholder session that the session's record
 * replaces.
 */
export const syncedMessages: SyncedKind<MessageRow> = {
  kind: 'messages',
  tables: ['sessions', 'messages'],
  read: (ctx, _projectId, id) => ctx.db.messages.get(id),
  readProject: (ctx, projectId) =>
    ctx.db.sessions
      .where('[projectId+lastActiveAt]')
      .between([projectId, Dexie.minKey], [projectId, maxKey()])
      .primaryKeys()
      .then((sessions) => messagesOf(ctx.db, sessions).toArray())
      .then((rows) => rows.filter((row) => row.projectId === projectId)),
  readDoc: async (ctx, projectId, sessionId) =>
    (await ctx.db.messages.where('[sessionId+at]').between([sessionId, Dexie.minKey], [sessionId, maxKey()]).toArray()).filter(
      (row) => row.projectId === projectId,
    ),
  toRecord: (row) => {
    // A row stored without its own stamp travels with it, as every record did before.
    const hlc = messageStamp(row)
    return { kind: 'messages', projectId: row.projectId, id: row.id, hlc, row: travelling({ ...row, hlc }, ['seq']) }
  },
  check(record) {
    const r = checkEnvelope(record, 'messages', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    // The same bounds as messages.append: another device gets no bigger messages than a local call.
    checkContent('message.content', r.content)
    if (r.meta !== undefined) checkJson('message.meta', r.meta, MAX_META_BYTES)
    if (!isOrderKey(r.at)) throw invalidInput(`message.at ${JSON.stringify(r.at)} is not an order key`)
    if (compareHlc(record.hlc, stampOfOrder(r.at)) < 0) throw invalidInput('A message record is stamped before its own append')
    const row: MessageRow = {
      id: record.id,
      sessionId: checkId('message.sessionId', r.sessionId),
      projectId: record.projectId,
      seq: 0,
      role: checkOneOf('message.role', r.role, ROLES),
      content: r.content as string,
      tokens: checkNumber('message.tokens', r.tokens, { min: 0, integer: true }),
      createdAt: checkTime('message.createdAt', r.createdAt),
      at: r.at,
      hlc: record.hlc,
    }
    if (r.meta !== undefined) row.meta = r.meta
    if (r.personId !== undefined) row.personId = checkId('message.personId', r.personId)
    if (r.deletedAt !== undefined) {
      row.deletedAt = checkTime('message.deletedAt', r.deletedAt)
      if (row.content !== '' || row.meta !== undefined || row.personId !== undefined)
        throw invalidInput('A deleted message record carries no content: empty content, no meta or person')
    }
    return row
  },
  async apply(ctx, w, row) {
    const stored = await ctx.db.messages.get(row.id)
    checkSameProject('messages', row.id, stored, row.projectId)
    if (stored && compareHlc(row.hlc, messageStamp(stored)) <= 0) return false
    if (stored && (stored.sessionId !== row.sessionId || stored.at !== row.at))
      throw new MemoryError('invalid_input', `A message record of ${JSON.stringify(row.id)} moves it to another session or place`)
    const session = await sessionFor(ctx, row)
    if (session === undefined) return false
    const next: MessageRow = { ...row, seq: stored?.seq ?? session.lastSeq + 1 }
    const nextSession: SessionRow = {
      ...session,
      lastSeq: stored ? session.lastSeq : session.lastSeq + 1,
      lastActiveAt: Math.max(session.lastActiveAt, row.createdAt),
    }
    // A record stamped at its append is stored as an append is: without `hlc`, the session's
    // `lastAt` standing for its stamp (clock-restore.ts), in the put of the session made anyway.
    const now = ctx.now()
    if (next.hlc === stampOfOrder(next.at!) && restorable(next.hlc, now)) {
      nextSession.lastAt = raisedLastAt(session.lastAt, next.hlc, now)
      delete next.hlc
    }
    await Promise.all([ctx.db.messages.put(next), ctx.db.sessions.put(nextSession)])
    if (next.deletedAt !== undefined) await ctx.index.remove(w, `message:${next.id}`)
    else await indexDocs(ctx.index, w, [messageDoc(next)], { fresh: stored === undefined })
    w.change('messages', 'put', next.id, next.projectId)
    w.change('sessions', 'put', session.id, session.projectId)
    return true
  },
}

/**
 * The session a remote message goes to: the stored one, or a placeholder when
 * the message came before its session's record; undefined when the session was purged.
 * @throws MemoryError `invalid_input` when the session belongs to another project.
 */
async function sessionFor(ctx: StoreContext, row: MessageRow): Promise<SessionRow | undefined> {
  const session = await ctx.db.sessions.get(row.sessionId)
  if (session?.purged) return undefined
  if (session && session.projectId !== row.projectId)
    throw new MemoryError(
      'invalid_input',
      `A message of project ${JSON.stringify(row.projectId)} names session ${JSON.stringify(row.sessionId)} of another project`,
    )
  return (
    session ?? {
      id: row.sessionId,
      projectId: row.projectId,
      status: 'active',
      startedAt: row.createdAt,
      lastActiveAt: row.createdAt,
      lastSeq: 0,
      placeholder: true,
    }
  )
}
