import { docsById } from '../index/doc-batches.js'
import type { StoreContext } from '../../store/store-context.js'
import { kindOf, type EmbedQueueRow, type VectorRow } from '../index/index-rows.js'
import type { SearchEngine } from '../types.js'
import { addVectors } from './vector-fill.js'
import { backfillEmbeddings } from './embed-backfill.js'
import { normalize } from './vector-topk.js'
import { encodeVector } from './vector-codec.js'

/** Settings of the background embedder. */
export interface EmbedQueueOptions {
  /** Documents per `embed()` call. Default 32. */
  batchSize?: number
  /** Wait after a write before draining, so bursts share a batch (ms). Default 25. */
  delayMs?: number
  /** First retry delay after a failed batch (ms); doubles per attempt up to `maxBackoffMs`. Default 500. */
  backoffMs?: number
  maxBackoffMs?: number
}

/** The running drain of a store's embed queue. */
export interface EmbedQueue {
  /** Embeds everything ready now; resolves when the queue holds nothing ready. */
  drain(): Promise<void>
  /** Resolves once every message and passage stored before this embedder was queued (see embed-backfill.ts). */
  readonly backfilled: Promise<number>
  stop(): void
}

/**
 * Starts embedding queued documents in batches, off the write path: a write
 * only adds a queue row in its own transaction; this drain calls the embedder
 * outside any transaction, stores the vectors and deletes the rows. It drains
 * once on start (the queue survives restarts); a failed batch stays queued
 * and is retried with exponential backoff, never failing the write.
 */
export function startEmbedQueue(ctx: StoreContext, engine: SearchEngine, options: EmbedQueueOptions = {}): EmbedQueue {
  const embedder = engine.embedder
  const batchSize = options.batchSize ?? 32
  const delayMs = options.delayMs ?? 25
  const backoffMs = options.backoffMs ?? 500
  const maxBackoffMs = options.maxBackoffMs ?? 60_000
  const { t } = engine
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  let stopped = false
  let again = false

  function schedule(ms: number): void {
    if (stopped || timer !== undefined || !embedder) return
    timer = setTimeout(
      () => {
        timer = undefined
        void drain()
      },
      Math.max(0, ms),
    )
    ;(timer as { unref?: () => void }).unref?.()
  }

  async function drainOnce(): Promise<number> {
    if (!embedder) return 0
    const now = Date.now()
    const queued = await engine.db.transaction('r', ['embedQueue'], () =>
      t.embedQueue
        .orderBy('seq')
        .limit(batchSize * 8)
        .toArray(),
    )
    const ready = queued.filter((row) => row.notBefore <= now).slice(0, batchSize)
    if (ready.length === 0) {
      if (queued.length > 0) schedule(Math.min(...queued.map((row) => row.notBefore)) - now)
      return 0
    }
    let vectors: Float32Array[]
    try {
      vectors = await embedder.embed(ready.map((row) => row.text))
      if (!Array.isArray(vectors) || vectors.length !== ready.length)
        throw new Error(`embed() returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors for ${ready.length} texts`)
    } catch (error) {
      ctx.status.fail('embedder', error)
      await postpone(ready)
      return 0
    }
    ctx.status.recover('embedder')
    const stored: VectorRow[] = []
    await engine.db.transaction('rw', ['embedQueue', 'textDocs', 'vectors'], async () => {
      const [current, docs] = await Promise.all([
        t.embedQueue.bulkGet(ready.map((row) => row.seq!)),
        Promise.all(ready.map((row) => docsById(t.textDocs, row.docId).then((rows) => rows.at(-1)))),
      ])
      for (let i = 0; i < ready.length; i++) {
        const queuedRow = current[i]
        const doc = docs[i]
        const vector = vectors[i]
        // Removed or re-written while we embedded: its new queue row (if any) gets its own turn.
        if (!queuedRow || !doc || !(vector instanceof Float32Array) || vector.length !== embedder.dimensions) continue
        const row: VectorRow = {
          docId: queuedRow.docId,
          projectId: queuedRow.projectId,
          kind: kindOf(queuedRow.docId),
          at: queuedRow.at ?? doc.a,
          ...encodeVector(normalize(Float32Array.from(vector)), engine.vectorPrecision),
        }
        if (queuedRow.sid !== undefined) row.sid = queuedRow.sid
        stored.push(row)
      }
      await Promise.all([t.vectors.bulkPut(stored), t.embedQueue.bulkDelete(ready.map((row) => row.seq!))])
    })
    addVectors(engine.vectors, stored)
    return ready.length
  }

  async function postpone(rows: EmbedQueueRow[]): Promise<void> {
    await engine.db.transaction('rw', ['embedQueue'], async () => {
      const current = await t.embedQueue.bulkGet(rows.map((row) => row.seq!))
      const next = current
        .filter((row): row is EmbedQueueRow => row !== undefined)
        .map((row) => ({
          ...row,
          attempts: row.attempts + 1,
          notBefore: Date.now() + Math.min(maxBackoffMs, backoffMs * 2 ** row.attempts),
        }))
      await t.embedQueue.bulkPut(next)
    })
    schedule(Math.min(maxBackoffMs, backoffMs * 2 ** Math.min(...rows.map((row) => row.attempts))))
  }

  function drain(): Promise<void> {
    again = true
    running ??= (async () => {
      try {
        while (!stopped && again) {
          again = false
          while (!stopped && (await drainOnce()) > 0);
        }
      } catch {
        // The store closed or storage failed: the rows stay queued for the next open.
      } finally {
        running = undefined
      }
    })()
    return running
  }

  engine.onEnqueue = () => schedule(delayMs)
  function stop(): void {
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
  }
  ctx.onClose.push(stop)
  schedule(0)
  const backfilled = embedder
    ? backfillEmbeddings(
        engine,
        embedder,
        () => schedule(delayMs),
        () => stopped,
      ).catch((error: unknown) => {
        // A close mid-way leaves the mark pending: the next open resumes.
        if (!stopped) ctx.status.fail('embedder', error)
        return 0
      })
    : Promise.resolve(0)
  return { drain, stop, backfilled }
}
