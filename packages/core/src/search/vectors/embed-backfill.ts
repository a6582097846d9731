/*
 * Which model made the stored vectors, and the background backfill that
 * (re-)queues every message and passage when the embedder is new to the store
 * or its model changed. The mark is kept in `meta` so vectors of two models
 * are never mixed, and a backfill cut short by a close resumes on the next open.
 */
import type { MessageRow, PassageRow } from '../../store/rows.js'
import type { Embedder } from '../../store/store-context.js'
import type { EmbedQueueRow } from '../index/index-rows.js'
import type { SearchEngine } from '../types.js'

/** The `meta` row naming the model of the stored vectors. */
export const EMBEDDER_META_KEY = 'search.embedder'
/** Records queued per backfill transaction: small, so writes of the app interleave. */
export const BACKFILL_CHUNK = 100
/** How often a backfill that is ahead of the model looks at the queue again (ms). */
export const BACKFILL_POLL_MS = 250

/** What the `meta` row holds. */
export type EmbedderMark = {
  model: string
  dimensions: number
  /** Set while records may still lack a queue row or a vector for this model. */
  backfill?: true
}

/** The id a store keeps for an embedder: its `model`, or only its dimensions when it names none. */
export function embedderKey(embedder: Embedder): EmbedderMark {
  return {
    model: typeof embedder.model === 'string' && embedder.model !== '' ? embedder.model : `unnamed/${embedder.dimensions}`,
    dimensions: embedder.dimensions,
  }
}

/**
 * Checks the stored mark against `embedder`; when the model differs, drops every
 * vector (they belong to the other model), then queues each message and
 * passage that has no vector and no queue row yet, a chunk per transaction,
 * the next chunk once the queue holds less than a chunk.
 * Calls `queued` after each chunk (the drain starts on it). Resolves when done;
 * stops early once `stopped()`.
 */
export async function backfillEmbeddings(engine: SearchEngine, embedder: Embedder, queued: () => void, stopped: () => boolean): Promise<number> {
  const { db, t } = engine
  const want = embedderKey(embedder)
  const mark = (await t.meta.get(EMBEDDER_META_KEY))?.value as EmbedderMark | undefined
  if (mark && mark.model === want.model && mark.dimensions === want.dimensions && !mark.backfill) return 0
  const changed = mark !== undefined && (mark.model !== want.model || mark.dimensions !== want.dimensions)
  await db.transaction('rw', [t.vectors, t.meta], async () => {
    // A store from before marks were kept: its vectors of the same length came from this embedder, as far as can be known.
    if (changed) await t.vectors.clear()
    else if (!mark) await t.vectors.filter((row) => row.vector.length !== want.dimensions).delete()
    await t.meta.put({ key: EMBEDDER_META_KEY, value: { ...want, backfill: true } })
  })
  if (changed) engine.vectors.clear()
  let added = 0
  for (const table of ['messages', 'passages'] as const) {
    let after: string | undefined
    for (;;) {
      if (stopped()) return added
      const n = await db.transaction('rw', [db.table(table), t.vectors, t.embedQueue], async () => {
        const coll = after === undefined ? db.table(table).orderBy(':id') : db.table(table).where(':id').above(after)
        const rows = (await coll.limit(BACKFILL_CHUNK).toArray()) as (MessageRow | PassageRow)[]
        if (rows.length === 0) return -1
        after = rows.at(-1)!.id
        const kind = table === 'messages' ? 'message' : 'passage'
        const docs = rows
          .map((r) => ({ row: r, docId: `${kind}:${r.id}`, text: 'content' in r ? r.content : r.text }))
          .filter((d) => typeof d.text === 'string' && d.text.trim() !== '' && !('deletedAt' in d.row && d.row.deletedAt !== undefined))
        const ids = docs.map((d) => d.docId)
        const [vectors, inQueue] = await Promise.all([t.vectors.bulkGet(ids), t.embedQueue.where('docId').anyOf(ids).primaryKeys()])
        const queuedIds = inQueue.length > 0 ? new Set((await t.embedQueue.bulkGet(inQueue)).map((q) => q?.docId)) : new Set<string | undefined>()
        const fresh: EmbedQueueRow[] = []
        docs.forEach((d, i) => {
          if (vectors[i] || queuedIds.has(d.docId)) return
          const q: EmbedQueueRow = { docId: d.docId, projectId: d.row.projectId, text: d.text, attempts: 0, notBefore: 0, at: d.row.createdAt }
          if ('sessionId' in d.row) q.sid = d.row.sessionId
          fresh.push(q)
        })
        if (fresh.length > 0) await t.embedQueue.bulkAdd(fresh)
        return fresh.length
      })
      if (n < 0) break
      added += n
      if (n > 0) queued()
      // Stay a chunk ahead of the model, no more: the queue fills as fast as IndexedDB writes, the
      // model drains it at a few texts a second, and every chunk written at once delays the app's writes.
      while (!stopped() && (await t.embedQueue.count()) >= BACKFILL_CHUNK) await new Promise((resolve) => setTimeout(resolve, BACKFILL_POLL_MS))
    }
  }
  if (!stopped()) await t.meta.put({ key: EMBEDDER_META_KEY, value: { ...want } })
  return added
}
