import * as Y from 'yjs'
import * as awarenessProtocol from 'y-protocols/awareness'
import * as syncProtocol from 'y-protocols/sync'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { MessageType, encodeScope, encodeSyncStep1, encodeTime, encodeUpdate } from './protocol.js'
import { createAwarenessLedger } from '../limits/awareness-budget.js'
import { encodeAwarenessFrames, readAwarenessEntries } from './awareness-frames.js'
import { createCompactionBudget } from './compaction-budget.js'
import type { CloseReason } from '@engram/sync/close-codes'
import type { Fanout, FanoutMessage } from '../cluster/fanout.js'
import type { RelayLimits } from '../limits/limits.js'
import type { Logger } from '../log.js'
import { errorMessage } from '../log.js'
import { mergeUpdates } from './merge-updates.js'
import type { RelayMetrics } from '../http/metrics.js'
import { roomOwner } from '../storage/persistence.js'
import type { RelayStore, StoredRoom } from '../storage/persistence.js'
import { RoomDamagedError } from '../storage/store-errors.js'
import type { UserQuotas } from '../limits/user-quotas.js'
import type { WriteBatch } from './write-batch.js'

/** One side of a room: a connection the room can send to. */
export interface Peer {
  send(message: Uint8Array): void
  /** A read-only connection's document updates are dropped. */
  readonly readOnly?: boolean
  /** Spend `bytes` of the connection's awareness byte rate; false when it is spent. */
  takeAwarenessBytes?(bytes: number): boolean
  /** Disconnect the peer with a documented code (a room's own socket closes; a multiplexed document is refused). */
  close?(reason: CloseReason): void
}

/** A loaded document with its connections. Create with `openRoom`. */
export interface Room {
  readonly name: string
  readonly doc: Y.Doc
  readonly peers: ReadonlyMap<Peer, Set<number>>
  /** Bytes currently stored for this room (updates since the last snapshot, plus it). */
  readonly storedBytes: number
  /** Awareness bytes the room holds. */
  readonly awarenessBytes: number
  readonly unloaded: boolean
  /** Add a peer and send it sync step 1 and the current awareness states. */
  join(peer: Peer): void
  /** Remove a peer and its awareness states. */
  leave(peer: Peer): void
  /** Handle one frame; returns a close reason when the peer must be disconnected. */
  receive(peer: Peer, message: Uint8Array): CloseReason | null
  /** Merge stored updates into one snapshot, within the room's compaction budget (`unloading`: bytes rule only). */
  compact(options?: { unloading?: boolean }): Promise<void>
  /** Reread the store (after the fanout lost messages) and pass on what was missing. */
  resync(): Promise<void>
  /** Commit, compact and free the in-memory document (`flush: false` after a failed commit). */
  unload(options?: { flush?: boolean }): Promise<void>
}

/** What a room needs from its relay. */
export interface RoomContext {
  store: RelayStore
  batch: WriteBatch
  fanout: Fanout
  quotas: UserQuotas
  metrics: RelayMetrics
  log: Logger
  limits: Pick<RelayLimits, 'maxDocumentBytes' | 'compactAfterUpdates' | 'maxMessageBytes' | 'maxAwarenessBytesPerConnection' | 'maxAwarenessBytesPerRoom'>
  /** Another instance dropped this room (its owner purged it): the relay closes its peers and unloads it. */
  dropped?(room: string): void
}

/** Origin of changes that another instance already stored: broadcast here, never stored again. */
const remote = Symbol('remote')

/** Above this share of the document cap a room compacts in the background (within its budget). */
const compactAtCapShare = 0.9
/** Sync step 1 waits at most this many commits for the room's queue to drain. */
const maxStep2Waits = 10

/**
 * Load a room from the store into a fresh `Y.Doc`, after subscribing to the
 * other instances' messages for it (so nothing committed meanwhile is
 * missed). Every later update from a peer is committed to the store (through
 * the write batch) before it is broadcast or published, and before any sync
 * step 2 that could carry it is sent.
 *
 * @throws RoomDamagedError when the stored updates cannot be read or decoded.
 */
export async function openRoom(name: string, ctx: RoomContext): Promise<Room> {
  const { store, metrics, log, limits, fanout, quotas } = ctx
  const user = roomOwner(name)
  const doc = new Y.Doc({ gc: true })
  let early: FanoutMessage[] | null = []
  let room: Room | null = null
  const onRemote = (message: FanoutMessage): void => {
    if (early !== null) early.push(message)
    else if (room?.unloaded === false) receiveRemote(message)
  }
  await fanout.join(name, onRemote)
  let stored: StoredRoom
  try {
    stored = await store.load(name)
    doc.transact(() => {
      for (const update of stored.updates) {
        try {
          Y.applyUpdate(doc, update)
        } catch (err) {
          throw new RoomDamagedError(name, err)
        }
      }
    })
  } catch (err) {
    fanout.leave(name)
    doc.destroy()
    throw err
  }

  let rows = stored.updates.length
  let storedBytes = stored.bytes
  let bytesSinceSnapshot = rows > 1 ? stored.bytes : 0
  let uncommitted = 0
  let unloaded = false
  let compacting: Promise<void> | null = null
  let deferred: NodeJS.Timeout | null = null
  const budget = createCompactionBudget(rows > 1 ? 0 : stored.bytes)
  const peers = new Map<Peer, Set<number>>()
  const awareness = new awarenessProtocol.Awareness(doc)
  awareness.setLocalState(null)
  const ledger = createAwarenessLedger(limits.maxAwarenessBytesPerConnection, limits.maxAwarenessBytesPerRoom)

  const grow = (bytes: number): void => {
    storedBytes += bytes
    bytesSinceSnapshot += bytes
    quotas.add(user, name, bytes)
  }

  const broadcast = (message: Uint8Array, except: unknown): void => {
    for (const peer of peers.keys()) if (peer !== except) peer.send(message)
  }

  const persist = (update: Uint8Array, onCommitted?: () => void): void => {
    uncommitted++
    rows++
    grow(update.byteLength)
    ctx.batch.add(name, update, () => {
      uncommitted--
      onCommitted?.()
    })
  }

  doc.on('update', (update: Uint8Array, origin: unknown) => {
    const message = encodeUpdate(update)
    if (origin === remote) return broadcast(message, null)
    // Relayed only once committed: nothing that is not in the store reaches a client.
    persist(update, () => {
      if (unloaded) return
      broadcast(message, origin)
      fanout.publish(name, 'update', update)
    })
  })

  awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
    const ids = peers.get(origin as Peer)
    if (ids !== undefined) {
      for (const id of added) ids.add(id)
      for (const id of removed) ids.delete(id)
    }
    ledger.forget(removed)
    const changed = added.concat(updated, removed)
    // Echo to the sender too: the stock client uses it as its keep-alive.
    for (const frame of encodeAwarenessFrames(awareness, changed, limits.maxMessageBytes)) broadcast(frame, null)
    if (origin !== remote) fanout.publish(name, 'awareness', awarenessProtocol.encodeAwarenessUpdate(awareness, changed))
  })

  const receiveRemote = (message: FanoutMessage): void => {
    if (message.kind === 'drop') {
      ctx.dropped?.(name)
      return
    }
    if (message.kind === 'resync') {
      void room?.resync().catch((err: unknown) => {
        log.warn('resync failed', { room: name, error: errorMessage(err) })
      })
      return
    }
    try {
      if (message.kind === 'update') {
        grow(message.payload.byteLength)
        Y.applyUpdate(doc, message.payload, remote)
      } else if (ledger.admit(null, readAwarenessEntries(message.payload))) {
        awarenessProtocol.applyAwarenessUpdate(awareness, message.payload, remote)
      }
    } catch (err) {
      log.warn('undecodable message from another instance', { room: name, from: message.from, error: errorMessage(err) })
    }
  }

  /** Whether `bytes` more would pass the document cap or the owner's quota, and which. */
  const overLimit = (bytes: number): CloseReason | null => {
    if (storedBytes + bytes > limits.maxDocumentBytes) return 'documentTooLarge'
    return quotas.check(user, name, bytes)
  }

  const maybeCompact = (): void => {
    if (rows > limits.compactAfterUpdates || storedBytes > limits.maxDocumentBytes * compactAtCapShare) void room?.compact()
  }

  const applyFrom = (peer: Peer, update: Uint8Array): CloseReason | null => {
    if (peer.readOnly === true) {
      metrics.writesDropped++
      return null
    }
    const refused = overLimit(update.byteLength)
    if (refused !== null) {
      // Room may come back from garbage, but only within the budget: a document
      // at its cap refuses growth without re-encoding anything.
      void room?.compact()
      return refused
    }
    const { pendingStructs, pendingDs } = doc.store
    try {
      Y.applyUpdate(doc, update, peer)
    } catch {
      return 'malformedMessage'
    }
    // Structs waiting for missing dependencies are served by sync step 2 but are
    // not in any 'update' event: store the raw update so they survive a restart.
    if (
      (doc.store.pendingStructs !== pendingStructs || doc.store.pendingDs !== pendingDs) &&
      (doc.store.pendingStructs !== null || doc.store.pendingDs !== null)
    )
      persist(update)
    maybeCompact()
    return null
  }

  const sendStep2 = (peer: Peer, stateVector: Uint8Array): void => {
    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, MessageType.sync)
    encoding.writeVarUint(encoder, syncProtocol.messageYjsSyncStep2)
    encoding.writeVarUint8Array(encoder, Y.encodeStateAsUpdate(doc, stateVector))
    peer.send(encoding.toUint8Array(encoder))
  }

  /** The reply carries document state: wait until the room's queued updates are committed. */
  const replyStep2 = async (peer: Peer, stateVector: Uint8Array): Promise<void> => {
    for (let i = 0; i < maxStep2Waits && uncommitted > 0; i++) {
      // On failure the relay has already closed this room's peers.
      if (!(await ctx.batch.flush())) return
    }
    if (!unloaded && peers.has(peer)) sendStep2(peer, stateVector)
  }

  const receiveSync = (peer: Peer, decoder: decoding.Decoder, size: number): CloseReason | null => {
    const kind = decoding.readVarUint(decoder)
    const payload = decoding.readVarUint8Array(decoder)
    if (decoder.pos !== size) return 'malformedMessage'
    if (kind === syncProtocol.messageYjsSyncStep1) {
      Y.decodeStateVector(payload) // throws on a malformed vector, before anything waits
      if (uncommitted === 0) sendStep2(peer, payload)
      else void replyStep2(peer, payload)
      return null
    }
    if (kind === syncProtocol.messageYjsSyncStep2 || kind === syncProtocol.messageYjsUpdate) return applyFrom(peer, payload)
    return 'malformedMessage'
  }

  const receiveAwareness = (peer: Peer, update: Uint8Array): CloseReason | null => {
    const entries = readAwarenessEntries(update)
    // A frame no budget can hold is refused for what it is, not as a rate.
    if (update.byteLength > limits.maxAwarenessBytesPerConnection + 64 * entries.length) return 'awarenessTooLarge'
    if (peer.takeAwarenessBytes?.(update.byteLength) === false) return 'rateLimited'
    if (!ledger.admit(peers.get(peer) ?? new Set(), entries)) return 'awarenessTooLarge'
    awarenessProtocol.applyAwarenessUpdate(awareness, update, peer)
    return null
  }

  const runCompaction = async (): Promise<void> => {
    if (!(await ctx.batch.flush()) || unloaded) return
    const started = performance.now()
    const rowsAtStart = rows
    const bytesAtStart = storedBytes
    const result = await store.compact(name, mergeUpdates)
    if (result === null) return // another instance holds the room's compaction lock
    const duration = performance.now() - started
    // Updates stored while compacting are not in the snapshot: keep counting them.
    const appended = storedBytes - bytesAtStart
    rows = result.rows + (rows - rowsAtStart)
    storedBytes = result.bytes + appended
    bytesSinceSnapshot = appended
    quotas.set(user, name, storedBytes)
    budget.record(duration, result.bytes)
    metrics.compactions++
    metrics.compactionSeconds += duration / 1000
  }

  room = {
    name,
    doc,
    peers,
    get storedBytes() {
      return storedBytes
    },
    get awarenessBytes() {
      return ledger.bytes
    },
    get unloaded() {
      return unloaded
    },
    join(peer) {
      peers.set(peer, new Set())
      // Scope and clock before sync step 1: a client learns them before it sends its state.
      peer.send(encodeScope(peer.readOnly === true))
      peer.send(encodeTime(Date.now()))
      peer.send(encodeSyncStep1(doc))
      const clients = Array.from(awareness.getStates().keys())
      for (const frame of encodeAwarenessFrames(awareness, clients, limits.maxMessageBytes)) peer.send(frame)
    },
    leave(peer) {
      const ids = peers.get(peer)
      if (ids === undefined) return
      peers.delete(peer)
      if (ids.size > 0) awarenessProtocol.removeAwarenessStates(awareness, Array.from(ids), null)
    },
    receive(peer, message) {
      try {
        const decoder = decoding.createDecoder(message)
        const type = decoding.readVarUint(decoder)
        switch (type) {
          case MessageType.sync:
            return receiveSync(peer, decoder, message.byteLength)
          case MessageType.awareness: {
            const update = decoding.readVarUint8Array(decoder)
            if (decoder.pos !== message.byteLength) return 'malformedMessage'
            return receiveAwareness(peer, update)
          }
          case MessageType.queryAwareness:
            for (const frame of encodeAwarenessFrames(awareness, Array.from(awareness.getStates().keys()), limits.maxMessageBytes)) peer.send(frame)
            // The answer to a client's heartbeat carries the clock too: a clock that jumps is seen within a beat.
            peer.send(encodeTime(Date.now()))
            return null
          default:
            return 'malformedMessage'
        }
      } catch {
        return 'malformedMessage'
      }
    },
    async compact({ unloading = false } = {}) {
      if (compacting !== null) return await compacting
      if (unloaded || rows <= 1) return
      if (!budget.allows(bytesSinceSnapshot, performance.now(), unloading)) {
        // Throttled by time only: come back when the budget allows, once.
        const wait = budget.waitMs()
        if (wait > 0 && deferred === null && budget.allows(bytesSinceSnapshot, performance.now(), true)) {
          deferred = setTimeout(() => {
            deferred = null
            maybeCompact()
          }, wait)
          deferred.unref()
        }
        return
      }
      compacting = runCompaction()
        .catch((err: unknown) => {
          log.error('compaction failed', { room: name, error: errorMessage(err) })
        })
        .finally(() => {
          compacting = null
        })
      await compacting
    },
    async resync() {
      const latest = await store.load(name)
      if (unloaded) return
      doc.transact(() => {
        for (const update of latest.updates) Y.applyUpdate(doc, update)
      }, remote)
    },
    async unload({ flush = true } = {}) {
      if (unloaded) return
      if (flush) {
        await room?.compact({ unloading: true })
        if (!(await ctx.batch.flush())) return // the relay unloaded the room after the failed commit
      }
      if (unloaded) return
      unloaded = true
      if (deferred !== null) clearTimeout(deferred)
      fanout.leave(name)
      peers.clear()
      awareness.destroy()
      doc.destroy()
    },
  }
  const buffered = early
  early = null
  for (const message of buffered) receiveRemote(message)
  return room
}
