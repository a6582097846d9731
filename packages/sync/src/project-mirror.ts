import { compareHlc, MemoryError, type MirroredKind, type MirroredRecord, PROJECT_DOC_KINDS, type SyncableMemory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import * as Y from 'yjs'
import type { DocPersistence } from './idb-persistence.js'
import { checkKey, onKeyCheckChange, otherKeyCheckExists, writeKeyCheck, type KeyCheckResult } from './key-check.js'
import { createMirrorDoc, type MirrorDoc, type UnreadableEntry } from './mirror-doc.js'
import { createRecordProblems, type StampedId } from './record-problems.js'
import { roomName } from './room-name.js'
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
  /** How far a stamp may lead this device's clock (ms) before its record is listed as `clock_ahead` (it is applied all the same). */
  readonly maxClockLeadMs: number
  setStatus(status: ConnectionStatus, error?: unknown, reason?: SyncErrorReason): void
  /** The records of this document set aside or with suspicious stamps, whenever the list changes. */
  setProblems(problems: readonly SyncProblem[]): void
  /** Takes a reading of the relay's time (shared by every document of the device). */
  learnClock(relayTime: number): Promise<void>
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
  /**
   * After {@link ProjectMirror.clear}: asks the relay to delete the document's room (storage
   * and quota), once it holds the deletions. Resolves at once with a link that cannot.
   * @throws MemoryError `unauthorized`, `internal` when the relay refuses.
   */
  drop(): Promise<void>
}

/**
 * Starts mirroring one project. Direction Dexie → doc: outbox entries are
 * published with the local origin and acked once y-indexeddb holds them.
 * Direction doc → Dexie: changes of any other origin are applied as remote
 * writes (LWW by HLC, the same rule on every device); where the local record is
 * newer the mirror publishes it again, so the document always ends with the
 * latest-HLC winner.
 *
 * With a link that learns the relay's time (`Connection.syncsClock`), local
 * edits wait in the outbox while the link is down: they are published once the
 * link has read the relay's time, before the relay gets this side's state, so
 * edits made with a wrong clock are stamped again (moved by the correction) before
 * any other device sees them.
 */
export function startProjectMirror(deps: MirrorDeps): ProjectMirror {
  const { memory, projectId } = deps
  const replication = replicationOf(memory)
  const session = deps.session ?? ''
  const kinds: readonly MirroredKind[] = session === '' ? PROJECT_DOC_KINDS : ['messages']
  const doc = new Y.Doc({ gc: true })
  const mirror: MirrorDoc = createMirrorDoc(doc, projectId, deps.cipher, undefined, kinds)
  const problems = createRecordProblems({
    projectId,
    maxClockLeadMs: deps.maxClockLeadMs,
    isAhead: (hlc) => replication.checkStamp(hlc, deps.maxClockLeadMs) === 'ahead',
    onChange: (list) => deps.setProblems(list),
  })
  const heldStamp = (kind: MirroredKind, id: string): string | undefined => mirror.heldStamp(kind, id)
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
  /** The current connection read the relay's time (or the link does not learn it): local edits may be published. */
  let linkReady = false
  /** Counts the link going down: a reading of the relay's time taken before belongs to a connection that is gone. */
  let linkEpoch = 0
  let offKeyCheck: (() => void) | undefined
  const acks = new Set<Promise<void>>()
  const inFlight = new Set<number>()
  const ackBatch: number[] = []
  let ackTimer: ReturnType<typeof setTimeout> | undefined
  const incoming = new Map<MirroredKind, Set<string>>()
  let applyQueued = false
  let drainQueued: Promise<void> | undefined

  /** Local edits wait while a link that learns the relay's time has not read it on this connection. */
  const mayPublish = (): boolean => linkReady || connection?.syncsClock !== true

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
  function setAside(type: 'malformed_stamp' | 'other_key', entries: ReadonlyArray<{ kind: MirroredKind; id: string; hlc: string }>): void {
    for (const p of problems.setAside(type, entries)) deps.onError(new MemoryError('invalid_input', p.message))
  }

  /**
   * Entries of the document that no device applies (a malformed stamp, a value of the losing
   * key): where this device holds the record, it publishes it again, so a device that joins
   * later gets the same value as every device that had it.
   */
  async function republishOver(ids: ReadonlyArray<{ kind: MirroredKind; id: string }>): Promise<void> {
    if (ids.length === 0 || stopped) return
    const wanted = new Set(ids.map((e) => `${e.kind}\u0000${e.id}`))
    const { records } = await replication.snapshot(projectId, { doc: session })
    const mine = records.filter((r) => wanted.has(`${r.kind}\u0000${r.id}`))
    if (mine.length === 0) return
    await mirror.publish(mine)
    problems.held(mine)
  }

  /** Entries with ids that name no record here, reported once each. */
  const invalidSeen = new Set<string>()
  function reportInvalid(invalid: ReadonlyArray<{ kind: MirroredKind; id: string }>): void {
    for (const e of invalid)
      if (!invalidSeen.has(`${e.kind}:${e.id}`) && invalidSeen.add(`${e.kind}:${e.id}`))
        deps.onError(
          new MemoryError('invalid_input', `Skipped ${e.kind} ${JSON.stringify(e.id)} of the document of ${projectId}: its id names no record of this project`),
        )
  }

  /** Stamps again this document's outbox entries written before a clock correction (oldest first), so reconcile publishes them right. */
  async function restampWaiting(): Promise<void> {
    for (;;) {
      const batch = await replication.pending({ projectId, doc: session, limit: deps.batchSize })
      const out = await replication.restamp(batch, heldStamp)
      if (out.length === batch.length && out.every((e, i) => e.seq === batch[i]!.seq)) return
    }
  }

  async function drainNow(): Promise<void> {
    for (;;) {
      if (!mayPublish()) return
      const waiting = (await replication.pending({ projectId, doc: session, limit: deps.batchSize + inFlight.size })).filter((e) => !inFlight.has(e.seq))
      if (waiting.length === 0 || stopped) return
      // Edits made before a correction of the clock go out moved by it (and after what the document holds).
      const entries = await replication.restamp(waiting, heldStamp)
      const records = entries.flatMap((e) => (e.record ? [e.record] : []))
      await mirror.publish(records)
      if (stopped || refused) return
      if (records.some(isPurge)) await persistence!.compact()
      problems.held(records)
      takeWhereDocumentWins(records)
      // Acked once y-indexeddb holds them (published, or superseded by a newer stamp in the document).
      scheduleAck(entries.map((e) => e.seq))
      if (waiting.length < deps.batchSize) return
    }
  }

  /**
   * A local edit that the document holds a newer record for (one from a clock at the top of the
   * range, or one that arrived while the edit was made) loses there: this device takes the
   * document's record too, as every other device does.
   */
  function takeWhereDocumentWins(records: readonly MirroredRecord[]): void {
    let queued = false
    for (const r of records) {
      if (compareHlc(mirror.heldStamp(r.kind, r.id), r.hlc) <= 0) continue
      let set = incoming.get(r.kind)
      if (!set) incoming.set(r.kind, (set = new Set()))
      set.add(r.id)
      queued = true
    }
    if (queued && !applyQueued) {
      applyQueued = true
      void enqueue(applyIncoming)
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
    if (!mayPublish()) return Promise.resolve()
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
    const { records, unreadable, malformed, invalid } = await mirror.read(ids)
    reportInvalid(invalid)
    const otherKey = await reportUnreadable(unreadable)
    setAside(
      'malformed_stamp',
      malformed.map((m) => ({ ...m })),
    )
    await republishOver([...malformed, ...otherKey])
    problems.refresh()
    if (records.length === 0) return
    const result = await replication.applyRemote(records, { maxClockLeadMs: deps.maxClockLeadMs })
    if (result.newer.length > 0) await mirror.publish(result.newer)
    const lost = new Set(result.newer.map((r) => `${r.kind}\u0000${r.id}`))
    problems.held([...records.filter((r) => !lost.has(`${r.kind}\u0000${r.id}`)), ...result.newer])
    if (result.applied > 0 && records.some(isPurge)) await persistence!.compact()
    for (const bad of result.rejected)
      deps.onError(new MemoryError('invalid_input', `Skipped a malformed ${bad.kind} record ${bad.id} from the document of ${projectId}`))
  }

  /**
   * Values this device cannot read are skipped (never written into Dexie) and reported as `crypto`.
   * When devices set the project up with different keys at once, the losing device's values are
   * expected to be unreadable: they are set aside as `other_key` problems (the record this device
   * holds, or its next local edit, replaces them).
   * @returns the entries set aside as `other_key`.
   */
  async function reportUnreadable(unreadable: readonly UnreadableEntry[]): Promise<UnreadableEntry[]> {
    if (unreadable.length === 0 || stopped) return []
    if (deps.cipher && (await otherKeyCheckExists(doc, projectId, deps.cipher))) {
      setAside(
        'other_key',
        unreadable.map((u) => ({ kind: u.kind, id: u.id, hlc: '' })),
      )
      return [...unreadable]
    }
    const first = unreadable[0]!
    const what = unreadable.length === 1 ? `${first.kind} ${first.id}` : `${unreadable.length} values (first: ${first.kind} ${first.id})`
    deps.setStatus('error', first.error, 'crypto')
    deps.onError(new MemoryError('crypto', `Skipped ${what} of project ${projectId}: ${first.error.message}`, { cause: first.error }))
    return []
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
    await restampWaiting()
    const { records, outbox } = await replication.snapshot(projectId, { doc: session })
    const local = new Map(records.map((r) => [`${r.kind}\u0000${r.id}`, r]))
    const held = await mirror.readAll()
    reportInvalid(held.invalid)
    await reportUnreadable(held.unreadable)
    setAside(
      'malformed_stamp',
      held.malformed.map((m) => ({ ...m })),
    )
    const fromDoc = held.records.filter((r) => compareHlc(r.hlc, local.get(`${r.kind}\u0000${r.id}`)?.hlc) > 0)
    const result = await replication.applyRemote(fromDoc, { maxClockLeadMs: deps.maxClockLeadMs })
    // Local records the document lacks, holds older, or holds at a stamp no device applies: published.
    await mirror.publish([...records, ...result.newer])
    if (stopped || refused) return
    const winners = new Map(held.records.map((r) => [`${r.kind}\u0000${r.id}`, r as StampedId]))
    for (const r of [...records, ...result.newer]) {
      const key = `${r.kind}\u0000${r.id}`
      if (compareHlc(r.hlc, winners.get(key)?.hlc) > 0) winners.set(key, r)
    }
    problems.held([...winners.values()])
    await persistence!.whenPersisted()
    await replication.ack(outbox)
  }

  /** Runs the first reconcile, once; 'synced' may be shown after it. */
  async function reconcileOnce(): Promise<void> {
    if (reconciled) return
    await enqueue(reconcile)
    if (stopped || refused) return
    reconciled = true
  }

  /** Takes a reading of the relay's time; records listed as ahead of this device's clock are looked at again. */
  async function learnClock(relayTime: number): Promise<void> {
    await deps.learnClock(relayTime)
    problems.refresh()
  }

  /**
   * The link read the relay's time (undefined: the relay does not send it) and waits for this
   * before the relay gets this side's state: the clock learns it, then what waited goes into the document.
   */
  async function beforeSync(relayTime: number | undefined): Promise<void> {
    if (stopped || refused) return
    const epoch = linkEpoch
    if (relayTime !== undefined) await learnClock(relayTime)
    if (epoch !== linkEpoch || stopped || refused) return
    linkReady = true
    if (!gateOpen) return // the key check decides after the first sync; reconcile publishes then
    if (!reconciled) await reconcileOnce()
    else await enqueue(drainNow)
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
    connectNow()
    // A link that learns the relay's time reconciles when it has (beforeSync); any other at once, offline too.
    if (!mayPublish()) return
    await reconcileOnce()
    if (!stopped && !refused && (linkStatus === 'synced' || linkStatus === 'read_only')) deps.setStatus(linkStatus)
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
    await reconcileOnce()
    if (stopped || refused) return
    // 'synced' only once the relay also holds what reconciling published.
    await connection?.confirm?.()
    if (!stopped && !refused && (linkStatus === 'synced' || linkStatus === 'read_only')) deps.setStatus(linkStatus)
  }

  function connectNow(): void {
    if (stopped || refused || connection) return
    const room = session === '' ? roomName(memory.userId, projectId) : roomName(memory.userId, projectId, session)
    connection = deps.connect({
      doc,
      room,
      projectId,
      beforeSync: (relayTime) => beforeSync(relayTime).catch(fail),
      relayTime: (relayTime) => void learnClock(relayTime).catch(fail),
      setStatus: (status, error, reason) => {
        if (stopped || refused) return
        linkStatus = status
        // A new connection reads the relay's time again before this side's edits go out.
        if (status === 'offline' || status === 'connecting' || status === 'error') {
          linkReady = false
          linkEpoch++
        }
        if (status === 'synced' || status === 'read_only') firstSynced()
        // Until reconciled, the document may still lack local records: not 'synced' yet.
        if ((status === 'synced' || status === 'read_only') && !reconciled) return
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
  async function drop(): Promise<void> {
    await ready
    if (stopped || refused || !connection?.drop) return
    // The other devices that have the document open get the deletions before the room goes.
    await connection.confirm?.()
    if (!stopped) await connection.drop()
  }

  return { projectId, ready, doc, drain: () => ready.then(drain), stop, clear, drop }
}

/** A purged fact's or session's tombstone: once it is in the document, the stored document must lose the old content too. */
function isPurge(record: MirroredRecord): boolean {
  return (record.kind === 'facts' || record.kind === 'sessions') && record.row.purged === true
}
