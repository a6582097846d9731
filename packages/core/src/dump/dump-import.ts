import { Dexie } from 'dexie'
import { blockId } from '../blocks/block-rules.js'
import type { Change } from '../store/change-feed.js'
import { invalidInput } from '../store/errors.js'
import { factText } from '../search/index/fact-text.js'
import { tagKeysOf } from '../facts/facts-rows.js'
import { withTaskHandles } from './dump-task-handles.js'
import { checkArtifactBudget } from '../artifacts/artifacts.js'
import { limitationKey } from '../limitations/limitations.js'
import { collectionOf, loadProjectScope, MEMORY_TABLES, primaryKeyOf, type ProjectScope } from './dump-scope.js'
import type { Dump } from './dump-validate.js'
import { checkMergeHistory, withoutStoredCopies } from './dump-merge-check.js'
import { raisedLastAt, restorable } from '../store/stamp-restore.js'
import { legacyOrder, stampOfOrder } from '../messages/message-order.js'
import { messageDoc } from '../messages/messages.js'
import { trackSync } from '../projects/projects.js'
import { indexDocs } from '../search/index/index-docs.js'
import { isSearchableObservation, type ObservationDocParts, observationDoc } from '../search/index/observation-text.js'
import type { FactRow, MessageRow, SummaryRow } from '../store/rows.js'
import { USER_PROJECT, type IndexClearing, type IndexedDoc, type StoreContext } from '../store/store-context.js'
import { indexSummary } from '../summaries/summary-rows.js'
import { journalChangeId, recountJournalSessions } from '../runtime/journal.js'
import { lessonChangeId } from '../runtime/lessons.js'
import { MIRRORED_KINDS } from '../catalog/lists.js'
import { write, type WriteScope } from '../store/write.js'
import { finishKnowledgeImport, prepareKnowledgeRows } from './dump-knowledge.js'

type Row = Record<string, unknown>
type Mode = 'merge' | 'replace'

/** Kinds mirrored by sync: their rows need an `hlc`, and a replace reports the ones it removed. */
const MIRRORED_TABLES = MIRRORED_KINDS

/**
 * Writes a validated dump in one transaction (memory tables, the search index
 * and the outbox): `replace` first clears the dump's scope (its project, or the
 * whole store), `merge` upserts. Rebuilds the index entries of imported facts,
 * messages, summaries and passages, and keeps each session's `lastSeq` at least
 * the highest imported message seq so later appends stay gap-free, and rebuilds
 * the journal's per-session counters (next seq, count, time range) from the rows.
 * @returns the number of rows written.
 * @throws MemoryError `invalid_input` when a row refers to a project or session
 * that is neither in the dump nor (for `merge`) in the store.
 */
export async function importDump(ctx: StoreContext, dump: Dump, mode: Mode): Promise<number> {
  try {
    // What a replace clears the index with, and what packs and merges the documents, load first: a
    // dynamic import inside the transaction would end it.
    const [clearing] = await Promise.all([mode === 'replace' ? ctx.index.clearing?.() : undefined, ctx.index.prepareBulk?.()])
    return await write(ctx, [...MEMORY_TABLES, 'journalSessions', ...ctx.index.tables], (w) => writeDump(ctx, w, dump, mode, clearing))
  } finally {
    // Whatever happened, track exactly the synced projects the store now holds.
    if (ctx.db.isOpen()) await ctx.db.transaction('r', ctx.db.projects, () => trackSyncedProjects(ctx))
  }
}

async function writeDump(ctx: StoreContext, w: WriteScope, dump: Dump, mode: Mode, clearing: IndexClearing | undefined): Promise<number> {
  const { db } = ctx
  // A dump never turns sync on: an imported project keeps this device's setting, a new one starts unsynced.
  const scope = dump.projectId === undefined ? undefined : await loadProjectScope(db, dump.projectId)
  const wholeStoreReplace = mode === 'replace' && scope === undefined
  const projects = await inKnownSpaces(ctx, dump, wholeStoreReplace, await withLocalSync(ctx, (dump.tables.projects ?? []) as Row[]))
  const rowsOf = (name: string): Row[] => (name === 'projects' ? projects : ((dump.tables[name] ?? []) as Row[]))
  await checkReferences(ctx, dump, mode)
  const sessionSeq = highestSeqs(rowsOf('messages') as unknown as MessageRow[])
  const sessionLastAt = new Map<string, string>()
  if (mode === 'merge') {
    // A merged session row never moves the stored counter back, nor drops the stamp of the stored messages.
    for (const [id, stored] of await checkMergeHistory(ctx, dump)) {
      if (stored.lastSeq > (sessionSeq.get(id) ?? 0)) sessionSeq.set(id, stored.lastSeq)
      if (stored.lastAt !== undefined) sessionLastAt.set(id, stored.lastAt)
    }
  }
  const messages = stampedMessages(rowsOf('messages') as unknown as MessageRow[], sessionLastAt, ctx.now())

  // Journal sessions whose records this import clears or writes: their counters are recounted.
  const journalSessions = new Set(rowsOf('journal').map((r) => r.sessionId as string))
  if (mode === 'replace' && scope !== undefined) for (const id of scope.sessionIds) journalSessions.add(id)
  const removed = mode === 'replace' ? await clearScope(ctx, w, scope, clearing) : []
  let count = 0
  const written: Change[] = []
  for (const table of MEMORY_TABLES) {
    const auto = primaryKeyOf(db, table).auto
    const source =
      table === 'messages' ? (messages as unknown as Row[]) : auto && !wholeStoreReplace ? await withoutStoredCopies(ctx, table, rowsOf(table)) : rowsOf(table)
    if (source.length === 0) continue
    const prepared = prepareRows(ctx, w, table, source, wholeStoreReplace, { seq: sessionSeq, lastAt: sessionLastAt })
    const rows = table === 'tasks' ? await withTaskHandles(ctx, prepared) : prepared
    // Messages and passages are indexed in batches whose numbers are read first: asked for before
    // the rows go out (a chain of Dexie promises beside the rows' writes), they are analyzed while
    // IndexedDB writes the rows.
    const docs = ctx.index.putMany ? batchDocs(table, rows) : undefined
    const indexing = docs ? ctx.index.putMany!(w, docs) : undefined
    const putting: Promise<unknown> = auto ? db.table(table).bulkPut(rows, { allKeys: true }) : db.table(table).bulkPut(rows)
    const [keys] = await Dexie.Promise.all<unknown>([putting, indexing])
    count += rows.length
    if (!docs) await indexRows(ctx, w, table, rows)
    rows.forEach((row, i) => {
      const change = changeOf(table, auto ? { ...row, seq: (keys as unknown[])[i] } : row)
      if (change) written.push(change)
    })
  }
  if (rowsOf('artifacts').length > 0) await checkArtifactBudget(ctx, 0)
  await finishKnowledgeImport(ctx, w, rowsOf('entities'), rowsOf('relations'))
  await raiseSessions(ctx, { seq: sessionSeq, lastAt: sessionLastAt }, new Set(rowsOf('sessions').map((s) => s.id as string)))
  await recountJournalSessions(ctx, [...journalSessions])
  if (wholeStoreReplace && !(await db.projects.get(USER_PROJECT))) {
    const now = ctx.now()
    await db.projects.add({ id: USER_PROJECT, name: 'User', sync: { enabled: false }, createdAt: now, updatedAt: now })
  }
  // Before commit, so write() queues mirrored rows of now-synced projects to the outbox.
  await trackSyncedProjects(ctx)
  recordChanges(w, written, removed)
  return count
}

async function withLocalSync(ctx: StoreContext, rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows
  const stored = await ctx.db.projects.bulkGet(rows.map((r) => r.id as string))
  return rows.map((r, i) => ({ ...r, sync: { ...(stored[i]?.sync ?? { enabled: false }) } }))
}

/** A project naming a space that is neither in the dump nor (unless it is replaced) in the store lands outside any space. */
async function inKnownSpaces(ctx: StoreContext, dump: Dump, wholeStoreReplace: boolean, rows: Row[]): Promise<Row[]> {
  if (!rows.some((r) => r.spaceId !== undefined)) return rows
  const known = new Set(((dump.tables.spaces ?? []) as Row[]).map((s) => s.id))
  if (!wholeStoreReplace) for (const id of await ctx.db.table('spaces').toCollection().primaryKeys()) known.add(id)
  return rows.map((r) => {
    if (r.spaceId === undefined || known.has(r.spaceId)) return r
    const { spaceId: _dropped, ...rest } = r
    return rest
  })
}

/** Kinds whose change id is not a row's own key: several rows may name the same record. */
const SHARED_IDS = new Set<Change['kind']>(['runs', 'lessons', 'usage'])

/** One change per written record (and a delete per removed mirrored record not written back). */
function recordChanges(w: WriteScope, written: Change[], removed: Change[]): void {
  const key = (c: Change) => `${c.kind}\u0000${c.id}`
  if (removed.length > 0) {
    const rewritten = new Set(written.filter((c) => (MIRRORED_TABLES as readonly string[]).includes(c.kind)).map(key))
    for (const c of removed) if (!rewritten.has(key(c))) w.change(c.kind, 'delete', c.id, c.projectId)
  }
  const seen = new Set<string>()
  for (const c of written) {
    if (SHARED_IDS.has(c.kind)) {
      if (seen.has(key(c))) continue
      seen.add(key(c))
    }
    w.change(c.kind, c.op, c.id, c.projectId)
  }
}

async function trackSyncedProjects(ctx: StoreContext): Promise<void> {
  const projects = await ctx.db.projects.toArray()
  ctx.syncedProjects.clear()
  ctx.conversationProjects.clear()
  for (const p of projects) trackSync(ctx, p)
}

/** Every projectId a row names must be a project of the dump or the store; every message's session likewise. */
async function checkReferences(ctx: StoreContext, dump: Dump, mode: Mode): Promise<void> {
  const inDump = new Set(((dump.tables.projects ?? []) as Row[]).map((p) => p.id as string))
  const named = new Set<string>()
  for (const [table, rows] of Object.entries(dump.tables)) {
    if (table === 'projects') continue
    for (const row of rows as Row[]) if (typeof row.projectId === 'string' && !inDump.has(row.projectId)) named.add(row.projectId)
  }
  if (mode === 'replace' && dump.projectId === undefined) named.delete(USER_PROJECT)
  const outside = [...named]
  const stored = mode === 'replace' && dump.projectId === undefined ? [] : await ctx.db.projects.bulkGet(outside)
  const missingProject = outside.find((_, i) => stored[i] === undefined)
  if (missingProject !== undefined)
    throw invalidInput(`The dump has rows of project ${JSON.stringify(missingProject)}, which is neither in dump.tables.projects nor in the store`)

  const sessions = new Set(((dump.tables.sessions ?? []) as Row[]).map((s) => s.id as string))
  const wanted = [...new Set(((dump.tables.messages ?? []) as Row[]).map((m) => m.sessionId as string))].filter((id) => !sessions.has(id))
  const found = mode === 'replace' ? [] : await ctx.db.sessions.bulkGet(wanted)
  const missingSession = wanted.find((_, i) => found[i] === undefined)
  if (missingSession !== undefined) {
    throw invalidInput(
      `The dump has messages of session ${JSON.stringify(missingSession)}, which is neither in dump.tables.sessions nor${mode === 'merge' ? '' : ' (for replace)'} in the store`,
    )
  }
}

/** Clears the scope; returns the mirrored records it removed (for delete changes). */
async function clearScope(ctx: StoreContext, w: WriteScope, scope: ProjectScope | undefined, clearing: IndexClearing | undefined): Promise<Change[]> {
  const removed: Change[] = []
  for (const table of MIRRORED_TABLES) {
    for (const row of await collectionOf(ctx.db, table, scope).toArray()) {
      const change = changeOf(table, row)
      if (change) removed.push(change)
    }
  }
  for (const table of MEMORY_TABLES) {
    // A project replace keeps the project row itself (the dump may not hold it).
    if (scope !== undefined && table === 'projects') continue
    if (scope === undefined) await ctx.db.table(table).clear()
    else await collectionOf(ctx.db, table, scope).delete()
  }
  if (scope === undefined) await ctx.db.table('journalSessions').clear()
  if (clearing) await (scope !== undefined ? clearing.removeProject(w, scope.projectId) : clearing.reset(w))
  else if (scope === undefined) for (const table of ctx.index.tables) await ctx.db.table(table).clear()
  return removed
}

/** What imported session rows get: the highest message seq of each session, and the stored `lastAt` a merge keeps. */
interface SessionCounters {
  seq: Map<string, number>
  lastAt: Map<string, string>
}

/** Copies rows only where they must change: auto-increment keys, missing clock stamps, session counters. */
function prepareRows(ctx: StoreContext, w: WriteScope, table: string, rows: Row[], keepAutoKeys: boolean, sessions: SessionCounters): Row[] {
  const pk = primaryKeyOf(ctx.db, table)
  if (pk.auto && !keepAutoKeys) {
    // Auto-increment keys of another store would overwrite unrelated rows here: append instead.
    const field = pk.fields[0]!
    return rows.map(({ [field]: _drop, ...rest }) => rest)
  }
  if (table === 'facts') return rows.map((r) => completeFact(r, w))
  if ((MIRRORED_TABLES as readonly string[]).includes(table)) {
    const knowledge = prepareKnowledgeRows(table, rows)
    return (knowledge ?? rows).map((r) => {
      const row = typeof r.hlc === 'string' ? r : { ...r, hlc: w.hlc() }
      if (table !== 'blocks') return row
      return {
        ...row,
        readOnly: typeof row.readOnly === 'boolean' ? row.readOnly : false,
        updatedAt: typeof row.updatedAt === 'number' ? row.updatedAt : ctx.now(),
      }
    })
  }
  // A limitation's key is its folded title: recomputed so a hand-edited dump cannot split one title in two.
  if (table === 'limitations') return rows.map((r) => ({ ...r, key: limitationKey(String(r.title)) }))
  if (table === 'sessions') {
    return rows.map((s) => {
      const seq = Math.max(typeof s.lastSeq === 'number' ? s.lastSeq : 0, sessions.seq.get(s.id as string) ?? 0)
      const lastAt = sessions.lastAt.get(s.id as string)
      if (seq === s.lastSeq && s.lastAt === lastAt) return s
      // A dump's `lastAt` speaks for the messages of the store it came from; imported messages carry their stamps.
      const { lastAt: _theirs, ...rest } = s
      return lastAt === undefined ? { ...rest, lastSeq: seq } : { ...rest, lastSeq: seq, lastAt }
    })
  }
  return rows
}

/** A fact row with the defaults of missing fields (tags [], confidence 1, hlc) and its tag index keys rebuilt. */
function completeFact(r: Row, w: WriteScope): Row {
  const tags = Array.isArray(r.tags) ? (r.tags as string[]) : []
  const tagKeys = tagKeysOf(r.projectId as string, tags)
  const current = r.tagKeys as unknown
  const sameKeys = Array.isArray(current) && current.length === tagKeys.length && tagKeys.every((k, i) => current[i] === k)
  if (sameKeys && Array.isArray(r.tags) && typeof r.confidence === 'number' && typeof r.hlc === 'string') return r
  return { ...r, tags, tagKeys, confidence: typeof r.confidence === 'number' ? r.confidence : 1, hlc: typeof r.hlc === 'string' ? r.hlc : w.hlc() }
}

function highestSeqs(messages: MessageRow[]): Map<string, number> {
  const seqs = new Map<string, number>()
  for (const m of messages) if (m.seq > (seqs.get(m.sessionId) ?? 0)) seqs.set(m.sessionId, m.seq)
  return seqs
}

/**
 * The dump's messages as they are stored: each with its order key (the legacy one when it has
 * none), and without `hlc` where its stamp is its key's, as an append is stored (kept out of the
 * stamp index); `lastAt` then takes the highest such stamp of each session (clock-restore.ts).
 */
function stampedMessages(rows: readonly MessageRow[], lastAt: Map<string, string>, now: number): MessageRow[] {
  // The highest stamp of each session's rows stored without `hlc` (well-formed, so they order as strings).
  const highest = new Map<string, string>()
  const stamped = rows.map((m) => {
    // A row without an order key gets the legacy one, whose stamp it takes (its own `hlc` is dropped).
    const keyed = typeof m.at === 'string'
    const at = keyed ? m.at! : legacyOrder(m).at
    const keyStamp = stampOfOrder(at)
    const stamp = keyed ? (m.hlc ?? keyStamp) : keyStamp
    if (stamp !== keyStamp || !restorable(stamp, now)) return { ...m, at, hlc: stamp }
    const top = highest.get(m.sessionId)
    if (top === undefined || stamp > top) highest.set(m.sessionId, stamp)
    if (m.hlc === undefined) return keyed ? { ...m } : { ...m, at }
    const { hlc: _same, ...row } = m
    return keyed ? row : { ...row, at }
  })
  for (const [sessionId, stamp] of highest) lastAt.set(sessionId, raisedLastAt(lastAt.get(sessionId), stamp, now))
  return stamped
}

/** Sessions that got messages but were not in the dump keep counting after the highest seq, and keep the stamps of their messages. */
async function raiseSessions(ctx: StoreContext, sessions: SessionCounters, inDump: Set<string>): Promise<void> {
  const ids = [...new Set([...sessions.seq.keys(), ...sessions.lastAt.keys()])].filter((id) => !inDump.has(id))
  if (ids.length === 0) return
  const rows = await ctx.db.sessions.bulkGet(ids)
  const raised = rows.flatMap((s) => {
    if (!s) return []
    const seq = Math.max(s.lastSeq, sessions.seq.get(s.id) ?? 0)
    const lastAt = sessions.lastAt.get(s.id)
    return seq === s.lastSeq && lastAt === s.lastAt ? [] : [lastAt === undefined ? { ...s, lastSeq: seq } : { ...s, lastSeq: seq, lastAt }]
  })
  if (raised.length > 0) await ctx.db.sessions.bulkPut(raised)
}

/** The index documents of imported messages or passages (indexed as one batch); undefined for other tables. */
function batchDocs(table: string, rows: Row[]): IndexedDoc[] | undefined {
  if (table === 'messages') return rows.map((row) => messageDoc(row as unknown as MessageRow))
  if (table !== 'passages') return undefined
  return rows.map(
    (p): IndexedDoc => ({
      docId: `passage:${String(p.id)}`,
      kind: 'passage',
      projectId: p.projectId as string,
      text: p.text as string,
      createdAt: p.createdAt as number,
    }),
  )
}

/**
 * Rebuilds the search-index entries of imported rows, in the import's transaction. Each
 * call is awaited through a Dexie promise: a long run of native awaits that touch no
 * table (a disabled or in-memory index) would otherwise lose Dexie's transaction zone.
 */
async function indexRows(ctx: StoreContext, w: WriteScope, table: string, rows: Row[]): Promise<void> {
  const put = (doc: IndexedDoc) => Dexie.Promise.resolve(ctx.index.put(w, doc))
  const docs = batchDocs(table, rows)
  if (docs) await indexDocs(ctx.index, w, docs)
  else if (table === 'summaries') for (const row of rows) await Dexie.Promise.resolve(indexSummary(ctx, w, row as unknown as SummaryRow))
  else if (table === 'facts') {
    for (const row of rows) {
      const f = row as unknown as FactRow
      if (f.deletedAt !== undefined) await Dexie.Promise.resolve(ctx.index.remove(w, `fact:${f.id}`))
      else await put({ docId: `fact:${f.id}`, kind: 'fact', projectId: f.projectId, text: factText(f.key, f.value), createdAt: f.updatedAt })
    }
  } else if (table === 'observations') {
    // Observations in force (or expired, not yet swept) are found again; condensed or purged ones leave search.
    const parts = rows as unknown as ObservationDocParts[]
    for (const o of parts) if (!isSearchableObservation(o)) await Dexie.Promise.resolve(ctx.index.remove(w, `observation:${o.id}`))
    await indexDocs(ctx.index, w, parts.filter(isSearchableObservation).map(observationDoc))
  }
}

/**
 * The change an imported row makes, with the id and projectId the kind's own writes use
 * (`''` for runtime rows without a project); undefined for rows no subscriber follows
 * (fact history, turns).
 */
function changeOf(table: string, row: Row): Change | undefined {
  const projectId = table === 'projects' ? (row.id as string) : typeof row.projectId === 'string' ? row.projectId : ''
  const op: Change['op'] = row.deletedAt === undefined ? 'put' : 'delete'
  const make = (kind: Change['kind'], id: unknown): Change => ({ kind, op, id: String(id), projectId, origin: 'local' })
  switch (table) {
    case 'projects':
    case 'facts':
    case 'sessions':
    case 'messages':
    case 'summaries':
    case 'passages':
    case 'tasks':
    case 'patterns':
    case 'artifacts':
    case 'entities':
    case 'relations':
    case 'observations':
      return make(table, row.id)
    case 'blocks':
      return make('blocks', blockId(projectId, row.label as string))
    case 'journal':
      return make('journal', journalChangeId(String(row.sessionId), Number(row.seq)))
    case 'runs':
    case 'checkpoints':
    case 'toolEvents':
      return make('runs', row.runId)
    case 'usage':
      return make('usage', row.seq)
    case 'lessons':
      return make('lessons', lessonChangeId(String(row.domain), String(row.key)))
    case 'outcomes':
      return make('lessons', `outcome:${String(row.seq)}`)
    case 'limitations':
      return make('limitations', row.key)
    case 'spaces':
      return make('spaces', row.id)
    case 'people':
      return make('people', row.id)
    default:
      return undefined
  }
}
