import { compareHlc, MemoryError, type Memory, type MirroredKind, type MirroredRecord } from '@engram/core'
import * as Y from 'yjs'
import type { DocPersistence } from './idb-persistence.js'
import { createMirrorDoc, type MirrorDoc } from './mirror-doc.js'
import type { Connection, ConnectionStatus, Connector } from './sync-types.js'

/** How long drained outbox entries wait to be acked together. */
const ACK_DELAY_MS = 20

/** What a {@link ProjectMirror} needs from the sync engine that owns it. */
export interface MirrorDeps {
  readonly memory: Memory
  readonly projectId: string
  readonly connect: Connector
  readonly persistence: (doc: Y.Doc) => DocPersistence
  readonly batchSize: number
  setStatus(status: ConnectionStatus, error?: unknown): void
  onError(error: unknown): void
}

/** One synced project: its Y.Doc, persistence, network link and the two directions of the mirror. */
export interface ProjectMirror {
  readonly projectId: string
  /** Resolves once the document is loaded, reconciled with Dexie and connecting. */
  readonly ready: Promise<void>
  /** The project document (tests, benchmarks). */
  readonly doc: Y.Doc
  /** Drains this project's outbox into the document; resolves when the drained entries are acked. */
  drain(): Promise<void>
  /** Stops everything; waits for work in flight. Deletes nothing. */
  stop(): Promise<void>
}

/**
 * Starts mirroring one project. Direction Dexie → doc: outbox entries are
 * published with the local origin and acked once y-indexeddb holds them.
 * Direction doc → Dexie: changes of any other origin are applied as remote
 * writes (LWW by HLC); where the local record is newer the mirror publishes it
 * again, so the document always ends with the latest-HLC winner.
 */
export function startProjectMirror(deps: MirrorDeps): ProjectMirror {
  const { memory, projectId } = deps
  const replication = memory.replication
  const doc = new Y.Doc({ gc: true })
  const mirror: MirrorDoc = createMirrorDoc(doc, projectId)
  let persistence: DocPersistence | undefined
  let connection: Connection | undefined
  let stopped = false
  let queue: Promise<void> = Promise.resolve()
  const acks = new Set<Promise<void>>()
  const inFlight = new Set<number>()
  const ackBatch: number[] = []
  let ackTimer: ReturnType<typeof setTimeout> | undefined
  const incoming = new Map<MirroredKind, Set<string>>()
  let applyQueued = false
  let drainQueued: Promise<void> | undefined

  /** Serializes drains and applies: each reads the document and Dexie, then writes one of them. */
  function enqueue(task: () => Promise<void>): Promise<void> {
    const run = queue.then(() => (stopped ? undefined : task()))
    queue = run.catch(fail)
    return queue
  }

  function fail(error: unknown): void {
    if (stopped) return
    if (error instanceof MemoryError && error.code === 'closed') {
      void stop()
      return
    }
    deps.setStatus('error', error)
    deps.onError(error)
  }

  async function drainNow(): Promise<void> {
    for (;;) {
      const entries = (await replication.pending({ projectId, limit: deps.batchSize + inFlight.size })).filter((e) => !inFlight.has(e.seq))
      if (entries.length === 0 || stopped) return
      const records = entries.flatMap((e) => (e.record ? [e.record] : []))
      mirror.publish(records)
      scheduleAck(entries.map((e) => e.seq))
      if (entries.length < deps.batchSize) return
    }
  }

  /**
   * Acks are batched: one y-indexeddb check and one outbox delete per
   * ACK_DELAY_MS instead of per write, off the path of the next write. Until
   * acked, entries stay in the outbox (a crash republishes them, harmlessly).
   */
  function scheduleAck(seqs: readonly number[]): void {
    for (const seq of seqs) {
      inFlight.add(seq)
      ackBatch.push(seq)
    }
    if (ackTimer !== undefined) return
    const flushed = new Promise<void>((resolve) => {
      ackTimer = setTimeout(() => {
        ackTimer = undefined
        const batch = ackBatch.splice(0)
        persistence!.whenPersisted().then(() => replication.ack(batch)).catch(fail).finally(() => {
          for (const seq of batch) inFlight.delete(seq)
          acks.delete(flushed)
          resolve()
        })
      }, ACK_DELAY_MS)
    })
    acks.add(flushed)
  }

  function drain(): Promise<void> {
    drainQueued ??= enqueue(async () => {
      drainQueued = undefined
      await drainNow()
    })
    const queued = drainQueued
    return queued.then(() => Promise.all([...acks])).then(() => undefined)
  }

  async function applyIncoming(): Promise<void> {
    applyQueued = false
    const records: MirroredRecord[] = []
    for (const [kind, ids] of incoming) {
      for (const id of ids) {
        const record = mirror.get(kind, id)
        if (record) records.push(record)
      }
    }
    incoming.clear()
    if (records.length === 0) return
    const result = await replication.applyRemote(records)
    if (result.newer.length > 0) mirror.publish(result.newer)
    for (const bad of result.rejected) deps.onError(new MemoryError('invalid_input', `Skipped a malformed ${bad.kind} record ${bad.id} from the document of ${projectId}`))
  }

  /** First mirroring and every restart: make Dexie and the document agree, then ack what that covered. */
  async function reconcile(): Promise<void> {
    const { records, outbox } = await replication.snapshot(projectId)
    const local = new Map(records.map((r) => [`${r.kind}\u0000${r.id}`, r]))
    const fromDoc = mirror.records().filter((r) => compareHlc(r.hlc, local.get(`${r.kind}\u0000${r.id}`)?.hlc) > 0)
    const result = await replication.applyRemote(fromDoc)
    mirror.publish([...records, ...result.newer])
    await persistence!.whenPersisted()
    await replication.ack(outbox)
  }

  async function start(): Promise<void> {
    persistence = deps.persistence(doc)
    await persistence.whenLoaded()
    if (stopped) return
    mirror.onRemoteChange((kind, ids) => {
      let set = incoming.get(kind)
      if (!set) incoming.set(kind, (set = new Set()))
      for (const id of ids) set.add(id)
      if (!applyQueued) {
        applyQueued = true
        void enqueue(applyIncoming)
      }
    })
    await enqueue(reconcile)
    if (stopped) return
    const room = `${encodeURIComponent(memory.userId)}/${encodeURIComponent(projectId)}`
    connection = deps.connect({ doc, room, projectId, setStatus: (status, error) => { if (!stopped) deps.setStatus(status, error) } })
  }

  async function stop(): Promise<void> {
    if (stopped) return
    stopped = true
    connection?.destroy()
    await queue
    await Promise.all([...acks])
    persistence?.destroy()
    doc.destroy()
  }

  const ready = start().catch((error: unknown) => {
    fail(error)
  })
  return { projectId, ready, doc, drain: () => ready.then(drain), stop }
}
