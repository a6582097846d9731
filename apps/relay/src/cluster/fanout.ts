/**
 * How relay instances hear each other: committed updates and awareness
 * changes of a room, and user revocations. A single instance uses
 * `localFanout` (nothing to tell anyone); several use `openRedisFanout`.
 */
export interface Fanout {
  /** This instance's id; messages it published itself are not delivered back to it. */
  readonly instanceId: string
  /** Start receiving `room`'s messages; resolves once subscribed, so a load after it misses nothing. */
  join(room: string, onMessage: (message: FanoutMessage) => void): Promise<void>
  /** Stop receiving `room`'s messages. */
  leave(room: string): void
  /** Tell the other instances (fire and forget: a lost message is repaired by `onResync`). */
  publish(room: string, kind: FanoutKind, payload: Uint8Array): void
  /** Announce that `user`'s tokens issued at or before `atMs` are revoked. */
  publishRevocation(user: string, atMs: number): Promise<void>
  /** Called after the bus reconnected: messages may have been lost, rooms must reread the store. Returns the unsubscribe. */
  onResync(listener: () => void): () => void
  /** Called for each revocation any instance announced. Returns the unsubscribe. */
  onRevocation(listener: (user: string, atMs: number) => void): () => void
  close(): Promise<void>
}

/** What a fanout message carries: a committed Yjs update, an awareness update, or `drop`: the owner purged the room (empty payload). */
export type FanoutKind = 'update' | 'awareness' | 'drop'

/** One message from another instance; `resync`: it could not publish some updates, reread the room from the store. */
export interface FanoutMessage {
  kind: FanoutKind | 'resync'
  payload: Uint8Array
  from: string
}

/**
 * The fanout of a relay that runs alone: nothing is published, nothing arrives.
 *
 * @example
 * createRelay({ secret, store, fanout: localFanout('relay-1') })
 */
export function localFanout(instanceId: string): Fanout {
  return {
    instanceId,
    async join() {},
    leave() {},
    publish() {},
    async publishRevocation() {},
    onResync: () => () => {},
    onRevocation: () => () => {},
    async close() {},
  }
}
