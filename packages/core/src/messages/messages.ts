import type { Page, PageOptions } from '../store/paging.js'
import { maxKey } from '../store/keys.js'
import { Dexie } from 'dexie'
import { MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import type { MessageRow, ProjectRow, SessionRow } from '../store/rows.js'
import { assertActive, requireSession } from '../sessions/sessions.js'
import { raisedLastAt, restorable } from '../store/stamp-restore.js'
import type { IndexedDoc, StoreContext } from '../store/store-context.js'
import { resolvePerson } from '../people/person-links.js'
import { checkJson, checkLimit, checkId, checkNumber, checkOneOf, checkOptions, checkString, type Json } from '../store/validate.js'
import { read, write } from '../store/write.js'

/** A message's author. */
export type Role = 'user' | 'assistant' | 'system' | 'tool'
/**
 * A message in a session; `seq` is gap-free per session on this device. Sessions
 * read in merged order (`tail`, `page`): the order of the messages' append stamps,
 * the same on every device of a project whose conversations sync (message-order.ts).
 */
export interface Message {
  id: string
  sessionId: string
  projectId: string
  seq: number
  role: Role
  content: string
  tokens: number
  createdAt: number
  meta?: Json
  /** Who wrote it: a canonical person id, resolved when it was appended. */
  personId?: string
}
/** What {@link MessagesApi.append} takes. */
export interface MessageInput {
  role: Role
  content: string
  meta?: Json
  /** Who wrote it; stored as the canonical id it resolves to (`memory.people.resolve`). */
  personId?: string
}

/** Messages of conversation sessions. */
export interface MessagesApi {
  /**
   * Appends a message to an active session; it gets the next `seq` (1, 2, … without gaps,
   * also under concurrent appends) and refreshes the session's `lastActiveAt`.
   * @throws MemoryError `not_found` for an unknown session (or one of an archived project),
   * `conflict` for a closed session, `invalid_input` on a bad role, content or meta,
   * `limit_exceeded` for content over 1 MiB or meta over 64 KiB, `internal` when the
   * tokenizer throws or returns something other than a non-negative number.
   */
  append(sessionId: string, message: MessageInput): Promise<Message>
  /** Appends a user message and the assistant's reply in one transaction. @throws MemoryError as {@link MessagesApi.append}. */
  appendExchange(sessionId: string, userText: string, assistantText: string): Promise<[Message, Message]>
  /**
   * Appends many messages to an active session in one transaction, in order (seqs follow on
   * without gaps); every message is checked before anything is written.
   * @example await memory.messages.appendMany(sessionId, [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }])
   * @throws MemoryError `invalid_input` when `messages` is not an array of 1–{@link MAX_APPEND_MANY}
   * messages or one of them is bad (its index is in the message; nothing is written), and the
   * codes of {@link MessagesApi.append}.
   */
  appendMany(sessionId: string, messages: MessageInput[]): Promise<Message[]>
  /** The last `n` (0–10,000) messages in merged order, oldest first. @throws MemoryError `not_found` for an unknown session, `invalid_input`. */
  tail(sessionId: string, n: number): Promise<Message[]>
  /**
   * Messages in merged order after the message whose `seq` is `after` (default 0: from the
   * first), oldest first; `next` is the cursor (a `seq`) for the following page and is absent
   * on the last page. Without messages from other devices merged order is `seq` order.
   * @throws MemoryError `not_found` for an unknown session, `invalid_input`.
   */
  page(sessionId: string, options?: PageOptions<number>): Promise<Page<Message, number>>
  /**
   * Replaces a message's content and/or meta (`meta: null` removes it); it keeps its id, `seq`
   * and place. Where conversations sync, the latest edit wins on every device.
   * @example await memory.messages.edit(message.id, { content: 'Fixed typo' })
   * @throws MemoryError `invalid_input` on a bad id or edit, `limit_exceeded` for content over 1 MiB
   * or meta over 64 KiB, `not_found` for an unknown or deleted message.
   */
  edit(id: string, edit: { content?: string; meta?: Json | null }): Promise<Message>
  /**
   * Deletes a message: it leaves `tail`, `page` and search; later messages keep their `seq`.
   * Where conversations sync, the deletion reaches every device.
   * @throws MemoryError `invalid_input` on a bad id, `not_found` for an unknown or deleted message.
   */
  delete(id: string): Promise<void>
}

/** Largest message content, in UTF-8 bytes. */
export const MAX_CONTENT_BYTES = 1024 * 1024
/** Most messages one `appendMany` call takes. */
export const MAX_APPEND_MANY = 10_000
/** Largest message meta, in bytes of its JSON text. */
export const MAX_META_BYTES = 64 * 1024
/** Messages of one append indexed one `put` each; a larger batch is indexed with one `putMany` (few requests, merged inline when large). */
const INDEXED_WITH_ROWS = 8
/** Every message role. */
export const ROLES = ['user', 'assistant', 'system', 'tool'] as const
const encoder = new TextEncoder()

interface Prepared {
  role: Role
  content: string
  tokens: number
  meta?: Json
  personId?: string
}

/** The search-index document of a message. */
export function messageDoc(row: MessageRow): IndexedDoc {
  return { docId: `message:${row.id}`, kind: 'message', projectId: row.projectId, sessionId: row.sessionId, text: row.content, createdAt: row.createdAt }
}

/** Creates the messages namespace of a store (edits and deletes: message-edits.ts). */
export function createMessages(ctx: StoreContext): Omit<MessagesApi, 'edit' | 'delete'> {
  const { db } = ctx
  const tables = ['projects', 'sessions', 'messages', 'people', ...ctx.index.tables]

  function prepare(name: string, input: MessageInput): Prepared {
    const { role, content, meta, personId } = checkOptions(name, input, ['role', 'content', 'meta', 'personId'])
    if (personId !== undefined) checkId(`${name}.personId`, personId)
    checkOneOf(`${name}.role`, role, ROLES)
    checkContent(`${name}.content`, content)
    if (meta !== undefined) checkJson(`${name}.meta`, meta, MAX_META_BYTES)
    const p: Prepared = { role: role!, content: content!, tokens: countTokens(ctx, content!) }
    if (meta !== undefined) p.meta = structuredClone(meta)
    if (personId !== undefined) p.personId = personId
    return p
  }

  async function appendAll(sessionId: string, inputs: Prepared[]): Promise<Message[]> {
    return write(ctx, tables, async (w) => {
      const session = await requireSession(ctx, sessionId)
      assertActive(session)
      const now = ctx.now()
      const people = inputs.some((p) => p.personId !== undefined)
        ? await Promise.all(inputs.map((p) => (p.personId === undefined ? undefined : resolvePerson(ctx, p.personId))))
        : []
      const rows = inputs.map((p, i): MessageRow => {
        // One stamp per message: its place in the merged order of the session (message-order.ts),
        // and the stamp of the row (`messageStamp`: no `hlc` of its own).
        const at = ctx.clock.tick()
        const row: MessageRow = {
          id: newId(now),
          sessionId,
          projectId: session.projectId,
          seq: session.lastSeq + i + 1,
          role: p.role,
          content: p.content,
          tokens: p.tokens,
          createdAt: now,
          at,
        }
        if (p.meta !== undefined) row.meta = p.meta
        const personId = people[i]
        if (personId !== undefined) row.personId = personId
        return row
      })
      const next: SessionRow = { ...session, lastSeq: session.lastSeq + rows.length, lastActiveAt: Math.max(session.lastActiveAt, now) }
      // The rows' stamps are their order keys': stored without `hlc` (kept out of its index), the
      // session's `lastAt` keeps the highest for the clock restore (clock-restore.ts), in the put
      // this append makes anyway. Stamps a restore would skip (the clock far ahead of the wall
      // clock) stay on their rows, as the restore's walk of the `hlc` index expects.
      const last = rows[rows.length - 1]!.at!
      if (restorable(last, now)) next.lastAt = raisedLastAt(session.lastAt, last, now)
      else for (const row of rows) row.hlc = row.at!
      // Every request goes out at once (one round trip); a thrown error below still rolls all of
      // it back. A few messages are indexed one Dexie promise chain each, after the rows (their
      // entries are analyzed while IndexedDB writes the rows). A batch is indexed with one `putMany`
      // (merged inline when large, once its rows are written), issued first: it reads the numbers
      // its documents take, then analyzes them while IndexedDB writes the rows.
      const docs = rows.map(messageDoc)
      const { index } = ctx
      const batched = docs.length > INDEXED_WITH_ROWS && index.putMany !== undefined
      const requests: Promise<unknown>[] = [db.projects.get(session.projectId)]
      if (batched) requests.push(index.putMany!(w, docs, { fresh: true }))
      requests.push(db.messages.bulkAdd(rows), db.sessions.put(next))
      if (!batched) requests.push(...docs.map((doc) => index.put(w, doc, { fresh: true })))
      const [project] = (await Dexie.Promise.all(requests)) as [ProjectRow | undefined]
      if (!project || project.archivedAt !== undefined) throw new MemoryError('not_found', `The project of session ${JSON.stringify(sessionId)} is archived`)
      for (const row of rows) w.change('messages', 'put', row.id, row.projectId)
      w.change('sessions', 'put', sessionId, session.projectId)
      return rows.map(toMessage)
    })
  }

  async function sessionRange<T>(sessionId: string, fn: (session: SessionRow) => Promise<T>): Promise<T> {
    return read(ctx, ['sessions', 'messages'], async () => fn(await requireSession(ctx, sessionId)))
  }

  return {
    async append(sessionId, message) {
      checkId('sessionId', sessionId)
      const [row] = await appendAll(sessionId, [prepare('message', message)])
      return row!
    },

    async appendExchange(sessionId, userText, assistantText) {
      checkId('sessionId', sessionId)
      const user = prepare('user', { role: 'user', content: userText })
      const assistant = prepare('assistant', { role: 'assistant', content: assistantText })
      const [a, b] = await appendAll(sessionId, [user, assistant])
      return [a!, b!]
    },

    async appendMany(sessionId, messages) {
      checkId('sessionId', sessionId)
      if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_APPEND_MANY) {
        throw new MemoryError('invalid_input', `messages must be an array of 1 to ${MAX_APPEND_MANY} messages`)
      }
      return appendAll(
        sessionId,
        messages.map((m, i) => prepare(`messages[${i}]`, m)),
      )
    },

    async tail(sessionId, n) {
      checkId('sessionId', sessionId)
      checkNumber('n', n, { min: 0, max: 10_000, integer: true })
      if (n === 0) return sessionRange(sessionId, async () => [])
      return sessionRange(sessionId, async () => {
        const newest = await db.messages
          .where('[sessionId+at]')
          .between([sessionId, Dexie.minKey], [sessionId, maxKey()])
          .reverse()
          .filter(isLive)
          .limit(n)
          .toArray()
        return newest.reverse().map(toMessage)
      })
    },

    async page(sessionId, options) {
      checkId('sessionId', sessionId)
      const o = checkOptions('options', options, ['after', 'limit'])
      const after = o.after === undefined ? 0 : checkNumber('after', o.after, { min: 0, integer: true })
      const limit = checkLimit('limit', o.limit, 100)
      return sessionRange(sessionId, async () => {
        let from: string | typeof Dexie.minKey = Dexie.minKey
        if (after > 0) {
          const cursor = await db.messages.where('[sessionId+seq]').equals([sessionId, after]).first()
          if (cursor?.at === undefined) return { items: [] }
          from = cursor.at
        }
        const rows = await db.messages
          .where('[sessionId+at]')
          .between([sessionId, from], [sessionId, maxKey()], false, true)
          .filter(isLive)
          .limit(limit + 1)
          .toArray()
        const items = rows.slice(0, limit).map(toMessage)
        const last = items[items.length - 1]
        return last !== undefined && rows.length > limit ? { items, next: last.seq } : { items }
      })
    },
  }
}

/** The public shape of a stored message (drops the order key and stamp). */
export function toMessage(row: MessageRow): Message {
  const { at: _at, hlc: _hlc, deletedAt: _deletedAt, ...message } = row
  return message
}

/** False for a deleted message's tombstone. */
const isLive = (row: MessageRow): boolean => row.deletedAt === undefined

/** Checks message content: a string of at most {@link MAX_CONTENT_BYTES} UTF-8 bytes. @throws MemoryError `invalid_input`, `limit_exceeded`. */
export function checkContent(name: string, content: unknown): void {
  checkString(name, content)
  const text = content as string
  // Only long strings can exceed the byte limit; most messages skip the encode.
  if (text.length * 3 > MAX_CONTENT_BYTES) {
    const bytes = encoder.encode(text).length
    if (bytes > MAX_CONTENT_BYTES) throw new MemoryError('limit_exceeded', `${name} is ${bytes} bytes, more than the limit of ${MAX_CONTENT_BYTES}`)
  }
}

/** Counts a message's tokens with the store's tokenizer. @throws MemoryError `internal` when the tokenizer fails. */
export function countTokens(ctx: StoreContext, content: string): number {
  let tokens: unknown
  try {
    tokens = ctx.tokenizer.count(content)
  } catch (error) {
    throw new MemoryError(
      'internal',
      `The tokenizer threw while counting a message: ${error instanceof Error ? error.message : String(error)}; fix the tokenizer passed to openMemory()`,
      { cause: error },
    )
  }
  if (typeof tokens !== 'number' || !Number.isFinite(tokens) || tokens < 0) {
    throw new MemoryError('internal', `The tokenizer returned ${String(tokens)} tokens; it must return a non-negative number`)
  }
  return Math.round(tokens)
}
