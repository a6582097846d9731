import * as Y from 'yjs'
import type { Connector } from './sync-types.js'

const NETWORK = Symbol('engram-loopback-network')

/**
 * An in-process network for tests and demos: replicas exchange Yjs updates
 * directly (no relay), and links can be cut and healed. Messages are delivered
 * asynchronously, in order; `settle()` delivers until nothing is in flight.
 */
export interface LoopbackNetwork {
  /** The connector of one replica (pass it as `startSync(memory, { connect })`). */
  connector(replica: string): Connector
  /** Takes a replica offline: nothing reaches it or leaves it. */
  disconnect(replica: string): void
  /** Brings a replica back; its documents exchange missing state with every connected peer. */
  reconnect(replica: string): void
  /** Delivers queued messages until none are left; returns how many were delivered. */
  settle(): Promise<number>
  /** Bytes of every update sent so far. */
  readonly bytesSent: number
}

/** Creates an empty loopback network; every replica starts online. */
export function createLoopbackNetwork(): LoopbackNetwork {
  const rooms = new Map<string, Map<string, Y.Doc>>()
  const offline = new Set<string>()
  const queue: Array<() => void> = []
  const statusOf = new Map<string, (online: boolean) => void>()
  let bytesSent = 0

  const peers = (room: string, replica: string): Array<[string, Y.Doc]> =>
    offline.has(replica) ? [] : [...(rooms.get(room) ?? [])].filter(([name]) => name !== replica && !offline.has(name))

  /**
   * The handshake of a (re)connecting replica: like a relay's sync step, the
   * peers' state reaches its document before it reports 'synced'; its own
   * state travels to the peers as queued messages.
   */
  function exchange(room: string, replica: string): void {
    const doc = rooms.get(room)?.get(replica)
    if (!doc) return
    for (const [, peer] of peers(room, replica)) {
      const toPeer = Y.encodeStateAsUpdate(doc, Y.encodeStateVector(peer))
      const toDoc = Y.encodeStateAsUpdate(peer, Y.encodeStateVector(doc))
      bytesSent += toPeer.byteLength + toDoc.byteLength
      Y.applyUpdate(doc, toDoc, NETWORK)
      queue.push(() => Y.applyUpdate(peer, toPeer, NETWORK))
    }
  }

  return {
    connector:
      (replica) =>
      ({ doc, room, setStatus }) => {
        let members = rooms.get(room)
        if (!members) rooms.set(room, (members = new Map()))
        members.set(replica, doc)
        const key = `${room}\u0000${replica}`
        statusOf.set(key, (online) => setStatus(online ? 'synced' : 'offline'))
        const onUpdate = (update: Uint8Array, origin: unknown): void => {
          if (origin === NETWORK) return
          for (const [name, peer] of peers(room, replica)) {
            bytesSent += update.byteLength
            // A link cut while the message is in flight drops it; the heal's state exchange resends.
            queue.push(() => {
              if (!offline.has(replica) && !offline.has(name)) Y.applyUpdate(peer, update, NETWORK)
            })
          }
        }
        doc.on('update', onUpdate)
        exchange(room, replica)
        setStatus(offline.has(replica) ? 'offline' : 'synced')
        return {
          destroy() {
            doc.off('update', onUpdate)
            members.delete(replica)
            statusOf.delete(key)
          },
        }
      },
    disconnect(replica) {
      offline.add(replica)
      for (const [key, set] of statusOf) if (key.endsWith(`\u0000${replica}`)) set(false)
    },
    reconnect(replica) {
      if (!offline.delete(replica)) return
      for (const [room, members] of rooms) if (members.has(replica)) exchange(room, replica)
      for (const [key, set] of statusOf) if (key.endsWith(`\u0000${replica}`)) set(true)
    },
    async settle() {
      let delivered = 0
      while (queue.length > 0) {
        queue.shift()!()
        delivered++
        if (delivered % 64 === 0) await new Promise((r) => setTimeout(r, 0))
      }
      return delivered
    },
    get bytesSent() {
      return bytesSent
    },
  }
}
