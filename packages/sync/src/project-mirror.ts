import { compareHlc, MemoryError, type MirroredKind, type MirroredRecord, PROJECT_DOC_KINDS, type SyncableMemory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import * as Y from 'yjs'
import type { DocPersistence } from './idb-persistence.js'
import { checkKey, onKeyCheckChange, otherKeyCheckExists, writeKeyCheck, type KeyCheckResult } from './key-check.js'
import { createMirrorDoc, type MirrorDoc, type UnreadableEntry } from './mirror-doc.js'
import type { Connection, ConnectionStatus, Connector, SyncErrorReason, SyncProblem } from './sync-types.js'
import type { ValueCipher } from './value-cipher.js'

/** How long drained outbox entries wait to be acked together. */
const ACK_DELAY_MS = 20

/** What a {@link ProjectMirror} needs from the sync engine that owns it. */
export interface MirrorDeps {
  readonly memory: SyncableMemory
  readonly projectId: string
  /**
   * Which document of the project this mirror keeps: '' (default) the project document
   * (room `<userId>/<projectId>`), a session id that session's messages (room
   * `<userId>/<projectId>/<sessionId>`, see session-mirrors.ts).
   */
  readonly session?: string
  readonly connect: Connector
  readonly persistence: (doc: Y.Doc) => DocPersistence
  readonly batchSize: number
  /** Seals and opens values (end-to-end encryption); undefined: values in clear. */
  readonly cipher?: ValueCipher | undefined
  /** How far a remote stamp may lead this device's clock (ms); records beyond it are set aside. */
  readonly maxClockLeadMs: number
  setStatus(status: ConnectionStatus, error?: unknown, reason?: SyncErrorReason): void
  /** The records of this project set aside (malformed stamp, clock far ahead), whenever the list changes. */
  setProblems(problems: readonly SyncProblem[]): void
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
  /**
   * Deletes every entry of the document (a purged session): the relay and the other devices
   * drop the content, and the stored copy is compacted.
   */
  clear(): Promise<void>
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
  const replication = replicationOf(memory)
  const session = deps.session ?? ''
  const kinds: readonly MirroredKind[] = session === '' ? PROJECT_DOC_KINDS : ['messages']
  const doc = new Y.Doc({ gc: true })
  const mirror: MirrorDoc = createMirrorDoc(doc, projectId, deps.cipher, (hlc) => replication.checkStamp(hlc, deps.maxClockLeadMs), kinds)
  const problems = new Map<string, SyncProblem>()
  let persistence: DocPersistence | undefined
  let connection: Connection | undefined
  let stopped = false
  /** Set when this device must not touch the document (wrong key, plain vs encrypted): status stays 'error'. */
  let refused: MemoryError | undefined
  /** Drains and applies wait until the key check passed (or sync stops). */
  let gateOpen = false
  let openGate!: () => void
  let queue: Promise<void> = new Promise<void>((resolve) => {
    openGate = resolve
  })
  let firstSynced!: () => void
  let hasSynced = false
  const synced = new Promise<void>((resolve) => {
    firstSynced = () => {
      hasSynced = true
      resolve()
    }
  })
  /** The key check after the first sync, while it runs. */
  let deciding: Promise<void> | undefined
  /** Dexie and the document agree (and the relay confirmed it when the first sync decided): 'synced' may be shown. */
  let reconciled = false
  /** The last status of the network link. */
  let linkStatus: ConnectionStatus = 'connecting'
  let offKeyCheck: (() => void) | undefined
  const acks = new Set<Promise<void>>()
  const inFlight = new Set<number>()
  const ackBatch: number[] = []
  let ackTimer: ReturnType<typeof setTimeout> | undefined
  const incoming = new Map<MirroredKind, Set<string>>()
  let applyQueued = false
  let drainQueued: Promise<void> | undefined

  /** Serializes drains and applies: each reads the document and Dexie, then writes one of them. */
  function enqueue(task: () => Promise<void>): Promise<void> {
    const run = queue.then(() => (stopped || refused ? undefined : task()))
    queue = run.catch(fail)
    return queue
  }

  function fail(error: unknown): void {
    if (stopped) return
    if (error instanceof MemoryError && error.code === 'closed') {
      void stop()
      return
    }
    deps.setStatus('error', error, error instanceof MemoryError && error.code === 'crypto' ? 'crypto' : 'internal')
    deps.onError(error)
  }

  /** Records set aside become problems in the status (and go to onError once per stamp). */
  function setAside(entries: ReadonlyArray<{ type: SyncProblem['type']; kind: MirroredKind; id: string; hlc: string }>): void {
    let changed = false
    for (const e of entries) {
      const key = `${e.kind}:${e.id}`
      if (problems.get(key)?.hlc === e.hlc) continue
      const message =
        e.type === 'malformed_stamp'
          ? `Set aside ${e.kind} ${e.id} of project ${projectId}: its stamp ${JSON.stringify(e.hlc)} is not a valid HLC stamp`
          : e.type === 'other_key'
            ? `Set aside ${e.kind} ${e.id} of project ${projectId}: it was sealed by a device that set the project up with another key at the same time (that device refuses to sync); the next local edit replaces it`
            : `Set aside ${e.kind} ${e.id} of project ${projectId}: its stamp ${e.hlc} leads this device's clock by more than ${deps.maxClockLeadMs} ms (is the writing device's clock wrong?); the next local edit replaces it`
      problems.set(key, { type: e.type, kind: e.kind, id: e.id, key, hlc: e.hlc, message })
      changed = true
      deps.onError(new MemoryError('invalid_input', message))
    }
    if (changed) deps.setProblems([...problems.values()])
  }

  /** These records are in the document at an accepted stamp now: no longer a problem. */
  function clearProblems(records: readonly MirroredRecord[]): void {
    let changed = false
    for (const r of records) changed = problems.delete(`${r.kind}:${r.id}`) || changed
    if (changed) deps.setProblems([...problems.values()])
  }

  function quarantinedOf(result: { quarantined: ReadonlyArray<{ record: MirroredRecord; verdict: 'malformed' | 'ahead' }> }): Set<string> {
    setAside(
      result.quarantined.map(({ record, verdict }) => ({
        type: verdict === 'ahead' ? ('clock_ahead' as const) : ('malformed_stamp' as const),
        kind: record.kind,
        id: record.id,
        hlc: String(record.hlc),
      })),
    )
    return new Set(result.quarantined.map(({ record }) => `${record.kind}:${record.id}`))
  }

  async function drainNow(): Promise<void> {
    for (;;) {
      const entries = (await replication.pending({ projectId, doc: session, limit: deps.batchSize + inFlight.size })).filter((e) => !inFlight.has(e.seq))
      if (entries.length === 0 || stopped) return
      const records = entries.flatMap((e) => (e.record ? [e.record] : []))
      // A local edit replaces an entry held at a stamp set aside here (malformed, far ahead).
      const { blocked } = await mirror.publish(records, { replaceSuspect: true })
      if (stopped || refused) return
      if (records.some(isPurge)) await persistence!.compact()
      clearProblems(records)
      // Acked only when published or superseded by an accepted newer stamp in the document.
      const kept = new Set(blocked.map((r) => `${r.kind}\u0000${r.id}`))
      scheduleAck(entries.filter((e) => !e.record || !kept.has(`${e.record.kind}\u0000${e.record.id}`)).map((e) => e.seq))
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
        persistence!
          .whenPersisted()
          .then(() => replication.ack(batch))
          .catch(fail)
          .finally(() => {
            for (const seq of batch) inFlight.delete(seq)
            acks.delete(flushed)
            resolve()
          })
      }, ACK_DELAY_MS)
    })
    acks.add(flushed)
  }

  function drain(): Promise<void> {
    // Before the key check passed, the outbox waits (offline: until the first sync); reconcile publishes it when the gate opens.
    if (!gateOpen) return hasSynced && deciding ? deciding.then(() => (gateOpen ? drain() : undefined)) : Promise.resolve()
    drainQueued ??= enqueue(async () => {
      drainQueued = undefined
      await drainNow()
    })
    const queued = drainQueued
    return queued.then(() => Promise.all([...acks])).then(() => undefined)
  }

  async function applyIncoming(): Promise<void> {
    applyQueued = false
    const ids: Array<[MirroredKind, string]> = []
    for (const [kind, set] of incoming) for (const id of set) ids.push([kind, id])
    incoming.clear()
    // Decrypt first, then apply in one Dexie transaction (no crypto awaited inside it).
    const { records, unreadable, malformed } = await mirror.read(ids)
    await reportUnreadable(unreadable)
    setAside(malformed.map((m) => ({ ...m, type: 'malformed_stamp' as const })))
    if (records.length === 0) return
    const result = await replication.applyRemote(records, { maxClockLeadMs: deps.maxClockLeadMs })
    const setAsideNow = quarantinedOf(result)
    clearProblems(records.filter((r) => !setAsideNow.has(`${r.kind}:${r.id}`)))
    if (result.newer.length > 0) await mirror.publish(result.newer)
    if (result.applied > 0 && records.some(isPurge)) await persistence!.compact()
    for (const bad of result.rejected)
      deps.onError(new MemoryError('invalid_input', `Skipped a malformed ${bad.kind} record ${bad.id} from the document of ${projectId}`))
  }

  /**
   * Values this device cannot read are skipped (never written into Dexie) and reported as `crypto`.
   * When devices set the project up with different keys at once, the losing device's values are
   * expected to be unreadable: they are set aside as `other_key` problems (a local edit replaces them).
   */
  async function reportUnreadable(unreadable: readonly UnreadableEntry[]): Promise<void> {
    if (unreadable.length === 0 || stopped) return
    if (deps.cipher && (await otherKeyCheckExists(doc, projectId, deps.cipher))) {
      setAside(unreadable.map((u) => ({ type: 'other_key' as const, kind: u.kind, id: u.id, hlc: '' })))
      return
    }
    const first = unreadable[0]!
    const what = unreadable.length === 1 ? `${first.kind} ${first.id}` : `${unreadable.length} values (first: ${first.kind} ${first.id})`
    deps.setStatus('error', first.error, 'crypto')
    deps.onError(new MemoryError('crypto', `Skipped ${what} of project ${projectId}: ${first.error.message}`, { cause: first.error }))
  }

  /** Stops every exchange with the document for good (until restarted with the right key): nothing is published or applied. */
  function refuse(error: MemoryError): void {
    if (stopped || refused) return
    refused = error
    connection?.destroy()
    connection = undefined
    deps.setStatus('error', error, 'key_mismatch')
    deps.onError(error)
  }

  /** First mirroring and every restart: make Dexie and the document agree, then ack what that covered. */
  async function reconcile(): Promise<void> {
    const { records, outbox } = await replication.snapshot(projectId, { doc: session })
    const local = new Map(records.map((r) => [`${r.kind}\u0000${r.id}`, r]))
    const held = await mirror.readAll()
    await reportUnreadable(held.unreadable)
    setAside(held.malformed.map((m) => ({ ...m, type: 'malformed_stamp' as const })))
    const fromDoc = held.records.filter((r) => compareHlc(r.hlc, local.get(`${r.kind}\u0000${r.id}`)?.hlc) > 0)
    const result = await replication.applyRemote(fromDoc, { maxClockLeadMs: deps.maxClockLeadMs })
    quarantinedOf(result)
    // Entries set aside are not replaced here: only a local edit (an outbox entry) replaces them.
    const { blocked } = await mirror.publish([...records, ...result.newer])
    if (stopped || refused) return
    await persistence!.whenPersisted()
    if (blocked.length === 0) {
      await replication.ack(outbox)
      return
    }
    // Some local records did not reach the document: the drain publishes the edits among them.
    void drain().catch(fail)
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
    offKeyCheck = onKeyCheckChange(doc, () => {
      // Another device wrote or replaced the key check: this device may no longer read the project.
      void checkKey(doc, projectId, deps.cipher)
        .then((check) => {
          if (check.state === 'refused') refuse(check.error)
        })
        .catch(fail)
    })
    const check: KeyCheckResult = await checkKey(doc, projectId, deps.cipher)
    if (check.state === 'refused') return refuse(check.error)
    // Unless its key already opened the document's key check, a device learns the relay's state
    // before it writes anything: the project may have been encrypted by another device meanwhile,
    // and a device with the wrong key or none must not overwrite values the others can read.
    if (!deps.cipher || check.state === 'absent') {
      deciding = openWhenKnown().catch(fail)
      connectNow()
      return
    }
    gateOpen = true
    openGate()
    await enqueue(reconcile)
    if (stopped || refused) return
    reconciled = true
    connectNow()
  }

  /** After the first sync with the relay: check the key again, write the key check if this device is the first to encrypt. */
  async function openWhenKnown(): Promise<void> {
    await synced
    if (stopped) return
    let check = await checkKey(doc, projectId, deps.cipher)
    if (check.state === 'absent' && deps.cipher) {
      await writeKeyCheck(doc, projectId, deps.cipher, replication.deviceId)
      // Another device may be setting the project up right now with another key: the relay's
      // confirmation of this check also brings every check that reached it first.
      await connection?.confirm?.()
      if (stopped) return
      check = await checkKey(doc, projectId, deps.cipher)
    }
    if (check.state === 'refused') return refuse(check.error)
    gateOpen = true
    openGate()
    await enqueue(reconcile)
    if (stopped || refused) return
    // 'synced' only once the relay also holds what reconciling published.
    await connection?.confirm?.()
    reconciled = true
    if (!stopped && !refused && linkStatus === 'synced') deps.setStatus('synced')
  }

  function connectNow(): void {
    if (stopped || refused || connection) return
    const room = `${encodeURIComponent(memory.userId)}/${encodeURIComponent(projectId)}${session === '' ? '' : `/${encodeURIComponent(session)}`}`
    connection = deps.connect({
      doc,
      room,
      projectId,
      setStatus: (status, error, reason) => {
        if (stopped || refused) return
        linkStatus = status
        if (status === 'synced') firstSynced()
        // Until reconciled, the document may still lack local records: not 'synced' yet.
        if (status === 'synced' && !reconciled) return
        deps.setStatus(status, error, reason)
      },
    })
  }

  async function stop(): Promise<void> {
    if (stopped) return
    stopped = true
    connection?.destroy()
    offKeyCheck?.()
    openGate() // queued tasks see `stopped` and skip
    firstSynced()
    await queue
    await Promise.all([...acks])
    persistence?.destroy()
    doc.destroy()
  }

  function clear(): Promise<void> {
    return ready.then(() =>
      enqueue(async () => {
        mirror.clear()
        await persistence!.compact()
      }),
    )
  }

  const ready = start().catch((error: unknown) => {
    openGate()
    fail(error)
  })
  return { projectId, ready, doc, drain: () => ready.then(drain), stop, clear }
}

/** A purged fact's or session's tombstone: once it is in the document, the stored document must lose the old content too. */
function isPurge(record: MirroredRecord): boolean {
  return (record.kind === 'facts' || record.kind === 'sessions') && record.row.purged === true
}
