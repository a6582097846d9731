import type { Transaction } from 'dexie'
import { type FactRow, INDEX_REBUILD_KEY, INDEX_REBUILD_TABLES, type MessageRow, type PassageRow, type SummaryRow } from '../../store/rows.js'
import type { IndexedDoc, StoreContext } from '../../store/store-context.js'
import type { Analyzer } from '../analysis/analyzer.js'
import { factText } from './fact-text.js'
import { entityText, type KnowledgeRowParts, relationRowText } from './knowledge-text.js'
import { isSearchableObservation, type ObservationDocParts, observationDoc } from './observation-text.js'
import type { TextCorpusRow, TextDocRow } from './index-rows.js'
import { mergeTail, type MergeTables } from './merger.js'
import { docRowOf, mergedRowOf, type SearchEngine } from './text-index.js'
import type { WriteScope } from '../../store/write.js'

/**
 * Builds the full-text index of every live record (messages, facts,
 * summaries, archive passages, entities, relations, observations) inside `tx`, which must be able to write the
 * index tables: used by the schema upgrade from version 1, whose index had
 * another layout. Documents are written and merged into posting blocks in the
 * same transaction, so the store is searchable as soon as it opens.
 */
export async function rebuildIndex(tx: Transaction, analyzer: Analyzer): Promise<void> {
  const [messages, facts, summaries, passages] = await Promise.all([
    tx.table<MessageRow>('messages').toArray(),
    tx.table<FactRow>('facts').toArray(),
    tx.table<SummaryRow>('summaries').toArray(),
    tx.table<PassageRow>('passages').toArray(),
  ])
  const docs: IndexedDoc[] = []
  for (const m of messages)
    docs.push({ docId: `message:${m.id}`, kind: 'message', projectId: m.projectId, sessionId: m.sessionId, text: m.content, createdAt: m.createdAt })
  for (const f of facts)
    if (f.deletedAt === undefined)
      docs.push({ docId: `fact:${f.id}`, kind: 'fact', projectId: f.projectId, text: factText(f.key, f.value), createdAt: f.updatedAt })
  for (const s of summaries) {
    if (s.deletedAt === undefined)
      docs.push({
        docId: `summary:${s.id}`,
        kind: 'summary',
        projectId: s.projectId,
        ...(s.sessionId === undefined ? {} : { sessionId: s.sessionId }),
        text: s.text,
        createdAt: s.createdAt,
      })
  }
  for (const p of passages) docs.push({ docId: `passage:${p.id}`, kind: 'passage', projectId: p.projectId, text: p.text, createdAt: p.createdAt })
  docs.push(...(await knowledgeDocs(tx)), ...(await observationDocs(tx)))
  docs.sort((a, b) => a.createdAt - b.createdAt || (a.docId < b.docId ? -1 : 1))

  const corpus = new Map<string, TextCorpusRow>()
  const rows: TextDocRow[] = docs.map((doc) => {
    let c = corpus.get(doc.projectId)
    if (!c) corpus.set(doc.projectId, (c = { p: doc.projectId, q: corpus.size + 1, docs: 0, length: 0 }))
    return docRowOf(analyzer, doc, c.q)
  })
  const t: MergeTables = { textDocs: tx.table('textDocs'), textBlocks: tx.table('textBlocks'), textCorpus: tx.table('textCorpus'), meta: tx.table('meta') }
  // The upgrade to version 2 runs before the segment table exists: it merges into posting blocks.
  if (!tx.idbtrans.objectStoreNames.contains('textSegs')) {
    await Promise.all([t.textCorpus.bulkPut([...corpus.values()]), rows.length > 0 ? t.textDocs.bulkAdd(rows) : undefined])
    await mergeTail(t)
    return
  }
  t.textSegs = tx.table('textSegs')
  if (tx.idbtrans.objectStoreNames.contains('textDirs')) {
    t.textDirs = tx.table('textDirs')
    t.textSegDocs = tx.table('textSegDocs')
  }
  // One segment per project: the rows are stored without their terms, which live in the segment only.
  const [, keys] = await Promise.all([t.textCorpus.bulkPut([...corpus.values()]), t.textDocs.bulkAdd(rows.map(mergedRowOf), { allKeys: true })])
  rows.forEach((row, i) => {
    row.n = keys[i]!
  })
  await mergeTail(t, Infinity, rows, undefined, [], 0)
}

/**
 * Rebuilds the index when a schema upgrade ran without the search module (it
 * left the `INDEX_REBUILD_KEY` note), in one transaction, then drops the note.
 */
export async function finishIndexRebuild(ctx: StoreContext, analyzer: Analyzer): Promise<void> {
  const note = await ctx.db.meta.get(INDEX_REBUILD_KEY)
  if (note === undefined) return
  const tables = [...INDEX_REBUILD_TABLES]
  await ctx.db.transaction('rw', tables, async (tx) => {
    // Another tab opening the same database may have finished it meanwhile.
    if ((await tx.table('meta').get(INDEX_REBUILD_KEY)) === undefined) return
    await rebuildIndex(tx, analyzer)
    await tx.table('meta').delete(INDEX_REBUILD_KEY)
  })
}

/**
 * The rebuild of a store's whole index inside a write (at-rest encryption switching keys):
 * vectors and queued embeddings are kept, every other index row is written again.
 */
export async function wholeIndexRebuild(ctx: StoreContext, engine: SearchEngine): Promise<(w: WriteScope) => Promise<void>> {
  const clearing = await engine.clearing!()
  return async (w) => {
    if (!engine.enabled) return
    const db = ctx.db
    const [vectors, queue] = await Promise.all([db.table('vectors').toArray(), db.table('embedQueue').toArray()])
    await clearing.reset(w)
    await db.table('textCorpus').clear()
    await rebuildIndex(w.tx, engine.analyzer)
    await Promise.all([vectors.length ? db.table('vectors').bulkPut(vectors) : undefined, queue.length ? db.table('embedQueue').bulkPut(queue) : undefined])
  }
}

/** The documents of live entities and relations (none in a database older than their tables). */
async function knowledgeDocs(tx: Transaction): Promise<IndexedDoc[]> {
  const names = tx.idbtrans.objectStoreNames
  if (!names.contains('entities') || !names.contains('relations')) return []
  const [entities, relations] = await Promise.all([
    tx.table<KnowledgeRowParts['entity']>('entities').toArray(),
    tx.table<KnowledgeRowParts['relation']>('relations').toArray(),
  ])
  const byId = new Map(entities.map((e) => [e.id, e.name]))
  const docs: IndexedDoc[] = []
  for (const e of entities)
    if (e.deletedAt === undefined && e.mergedInto === undefined)
      docs.push({ docId: `entity:${e.id}`, kind: 'entity', projectId: e.projectId, text: entityText(e), createdAt: e.createdAt })
  for (const r of relations)
    if (r.deletedAt === undefined)
      docs.push({ docId: `relation:${r.id}`, kind: 'relation', projectId: r.projectId, text: relationRowText(r, byId), createdAt: r.validFrom })
  return docs
}

/** The documents of observations in force or expired but not yet purged (none in a database older than their table). */
async function observationDocs(tx: Transaction): Promise<IndexedDoc[]> {
  if (!tx.idbtrans.objectStoreNames.contains('observations')) return []
  return (await tx.table<ObservationDocParts>('observations').toArray()).filter(isSearchableObservation).map(observationDoc)
}
