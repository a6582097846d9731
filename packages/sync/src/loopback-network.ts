import * as Y from 'yjs'
import type { Connector } from './sync-types.js'

const NETWORK = Symbol('engram-loopback-network')

/** Options of {@link createLoopbackNetwork}. */
export interface LoopbackOptions {
  /**
   * The relay's clock (epoch ms). When given, every link reads it before each exchange (as the
   * relay's time message: `ConnectorContext.beforeSync`), and {@link LoopbackNetwork.heartbeat}
   * sends it again to every connected document.
   */
  relayTime?: () => number
}

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
  /** Delivers queued messages until none are left (and every link connecting has connected); returns how many were delivered. */
  settle(): Promise<number>
  /** Sends the relay's time to every connected document of `replica` (every replica when left out): a heartbeat's reading. */
  heartbeat(replica?: string): void
  /** Resolves once every link that is connecting has read the relay's time and exchanged its state (nothing else is delivered). */
  whenConnected(): Promise<void>
  /** Bytes of every update sent so far. */
  readonly bytesSent: number
}

/** Creates an empty loopback network; every replica starts online. */
export function createLoopbackNetwork(options: LoopbackOptions = {}): LoopbackNetwork {
  const rooms = new Map<string, Map<string, Y.Doc>>()
  const offline = new Set<string>()
  const queue: Array<() => void> = []
  const statusOf = new Map<string, (online: boolean) => void>()
  const heartbeats = new Map<string, () => void>()
  /** Links reading the relay's time before their exchange. */
  const connecting = new Set<Promise<void>>()
  let bytesSent = 0
  const { relayTime } = options

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
      ({ doc, room, setStatus, beforeSync, relayTime: relayTimeOf }) => {
        let members = rooms.get(room)
        if (!members) rooms.set(room, (members = new Map()))
        members.set(replica, doc)
        const key = `${room}\u0000${replica}`
        let attempt = 0
        /** (Re)connects: with a relay clock, the document reads its time first, then exchanges, then it is 'synced'. */
        const link = (): void => {
          if (offline.has(replica)) return setStatus('offline')
          if (!relayTime || !beforeSync) {
            exchange(room, replica)
            return setStatus('synced')
          }
          const mine = ++attempt
          const done: Promise<void> = beforeSync(relayTime())
            .then(() => {
              if (mine !== attempt || offline.has(replica) || !members.has(replica)) return
              exchange(room, replica)
              setStatus('synced')
            })
            .finally(() => connecting.delete(done))
          connecting.add(done)
        }
        statusOf.set(key, (online) => {
          if (online) return link()
          attempt++
          setStatus('offline')
        })
        if (relayTime && relayTimeOf) heartbeats.set(key, () => void (offline.has(replica) || relayTimeOf(relayTime())))
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
        link()
        return {
          syncsClock: relayTime !== undefined,
          destroy() {
            attempt++
            doc.off('update', onUpdate)
            members.delete(replica)
            statusOf.delete(key)
            heartbeats.delete(key)
          },
        }
      },
    disconnect(replica) {
      offline.add(replica)
      for (const [key, set] of statusOf) if (key.endsWith(`\u0000${replica}`)) set(false)
    },
    reconnect(replica) {
      if (!offline.delete(replica)) return
      for (const [key, set] of statusOf) if (key.endsWith(`\u0000${replica}`)) set(true)
    },
    async settle() {
      let delivered = 0
      for (;;) {
        while (connecting.size > 0) await Promise.all([...connecting])
        if (queue.length === 0) return delivered
        queue.shift()!()
        delivered++
        if (delivered % 64 === 0) await new Promise((r) => setTimeout(r, 0))
      }
    },
    async whenConnected() {
      while (connecting.size > 0) await Promise.all([...connecting])
    },
    heartbeat(replica) {
      for (const [key, beat] of heartbeats) if (replica === undefined || key.endsWith(`\u0000${replica}`)) beat()
    },
    get bytesSent() {
      return bytesSent
    },
  }
}
