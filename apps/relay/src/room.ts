import * as Y from 'yjs'
import * as awarenessProtocol from 'y-protocols/awareness'
import * as syncProtocol from 'y-protocols/sync'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { MessageType, encodeAwareness, encodeSyncStep1, encodeUpdate } from './protocol.js'
import type { RelayMetrics } from './metrics.js'
import type { RelayStore } from './persistence.js'
import type { WriteBatch } from './write-batch.js'
import type { CloseReason } from './close-codes.js'
import type { Logger } from './log.js'
import { errorMessage } from './log.js'

/** One side of a room: a connection the room can send to. */
export interface Peer {
  send(message: Uint8Array): void
}

/** A loaded document with its connections. Create with `loadRoom`. */
export interface Room {
  readonly name: string
  readonly doc: Y.Doc
  readonly peers: ReadonlyMap<Peer, Set<number>>
  /** Bytes currently stored for this room (updates since the last snapshot, plus it). */
  readonly storedBytes: number
  /** Add a peer and send it sync step 1 and the current awareness states. */
  join(peer: Peer): void
  /** Remove a peer and its awareness states. */
  leave(peer: Peer): void
  /** Handle one frame; returns a close reason when the peer must be disconnected. */
  receive(peer: Peer, message: Uint8Array): CloseReason | null
  /** Merge stored updates into one snapshot (no-op when already one). */
  compact(): void
  /** Commit, compact and free the in-memory document (`flush: false` after a failed commit). */
  unload(options?: { flush?: boolean }): void
}

interface RoomContext {
  store: RelayStore
  batch: WriteBatch
  metrics: RelayMetrics
  log: Logger
  maxDocumentBytes: number
  compactAfterUpdates: number
}

/**
 * Load a room from the store into a fresh `Y.Doc`. Every later update is
 * committed to the store (through the write batch) before it is broadcast to
 * the other peers, and before any sync step 2 that could carry it is sent.
 */
export function loadRoom(name: string, ctx: RoomContext): Room {
  const { store, metrics, log } = ctx
  const doc = new Y.Doc({ gc: true })
  const stored = store.load(name)
  doc.transact(() => {
    for (const update of stored.updates) {
      try {
        Y.applyUpdate(doc, update)
      } catch (err) {
        log.error('stored update skipped', { room: name, error: errorMessage(err) })
      }
    }
  })
  let rows = stored.updates.length
  let storedBytes = stored.bytes
  let unloaded = false
  const peers = new Map<Peer, Set<number>>()
  const awareness = new awarenessProtocol.Awareness(doc)
  awareness.setLocalState(null)

  const persist = (update: Uint8Array, onCommitted?: () => void): void => {
    ctx.batch.add(name, update, onCommitted)
    rows++
    storedBytes += update.byteLength
  }

  const broadcast = (message: Uint8Array, except: unknown): void => {
    for (const peer of peers.keys()) if (peer !== except) peer.send(message)
  }

  doc.on('update', (update: Uint8Array, origin: unknown) => {
    const message = encodeUpdate(update)
    // Relayed only once committed: nothing that is not on disk reaches a client.
    persist(update, () => {
      if (!unloaded) broadcast(message, origin)
    })
  })

  awareness.on('update', ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
    const ids = peers.get(origin as Peer)
    if (ids !== undefined) {
      for (const id of added) ids.add(id)
      for (const id of removed) ids.delete(id)
    }
    // Echo to the sender too: the stock client uses it as its keep-alive.
    broadcast(encodeAwareness(awareness, added.concat(updated, removed)), null)
  })

  const applyFrom = (peer: Peer, update: Uint8Array): CloseReason | null => {
    if (storedBytes + update.byteLength > ctx.maxDocumentBytes) {
      room.compact()
      if (storedBytes + update.byteLength > ctx.maxDocumentBytes) return 'documentTooLarge'
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
    if (rows > ctx.compactAfterUpdates) room.compact()
    return null
  }

  const receiveSync = (peer: Peer, decoder: decoding.Decoder, size: number): CloseReason | null => {
    const kind = decoding.readVarUint(decoder)
    const payload = decoding.readVarUint8Array(decoder)
    if (decoder.pos !== size) return 'malformedMessage'
    if (kind === syncProtocol.messageYjsSyncStep1) {
      // The reply carries document state: commit what is queued first. On failure
      // the relay has already closed this room's peers.
      if (!ctx.batch.flush()) return null
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, MessageType.sync)
      encoding.writeVarUint(encoder, syncProtocol.messageYjsSyncStep2)
      encoding.writeVarUint8Array(encoder, Y.encodeStateAsUpdate(doc, payload))
      peer.send(encoding.toUint8Array(encoder))
      return null
    }
    if (kind === syncProtocol.messageYjsSyncStep2 || kind === syncProtocol.messageYjsUpdate) return applyFrom(peer, payload)
    return 'malformedMessage'
  }

  const room: Room = {
    name,
    doc,
    peers,
    get storedBytes() {
      return storedBytes
    },
    join(peer) {
      peers.set(peer, new Set())
      peer.send(encodeSyncStep1(doc))
      const states = awareness.getStates()
      if (states.size > 0) peer.send(encodeAwareness(awareness, Array.from(states.keys())))
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
            awarenessProtocol.applyAwarenessUpdate(awareness, update, peer)
            return null
          }
          case MessageType.queryAwareness:
            peer.send(encodeAwareness(awareness, Array.from(awareness.getStates().keys())))
            return null
          default:
            return 'malformedMessage'
        }
      } catch {
        return 'malformedMessage'
      }
    },
    compact() {
      if (unloaded || !ctx.batch.flush() || unloaded || rows <= 1) return
      const snapshot = Y.encodeStateAsUpdate(doc)
      ctx.store.compact(name, snapshot)
      rows = 1
      storedBytes = snapshot.byteLength
      metrics.compactions++
    },
    unload({ flush = true } = {}) {
      if (unloaded) return
      if (flush) {
        try {
          room.compact()
        } catch (err) {
          log.error('compaction failed', { room: name, error: errorMessage(err) })
        }
        if (unloaded) return // the commit failed and the relay unloaded the room meanwhile
      }
      unloaded = true
      peers.clear()
      awareness.destroy()
      doc.destroy()
    },
  }
  return room
}
