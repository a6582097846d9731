import { roomName, roomOwnerKey } from '@engram/sync/room-name'

/**
 * The durable store behind the relay. An update is committed when the promise
 * of `appendMany` resolves; the relay broadcasts it only then. Two
 * implementations: SQLite (embedded, one machine) and PostgreSQL (any number
 * of relay instances).
 */
export interface RelayStore {
  /**
   * All stored updates of a room, oldest first, and their total size.
   *
   * @throws RoomDamagedError when the room's rows cannot be read (corrupt page).
   * @throws Error when the store is unreachable.
   */
  load(room: string): Promise<StoredRoom>
  /** Store updates of any rooms durably, all or none (one transaction). */
  appendMany(entries: ReadonlyArray<StoredUpdate>): Promise<void>
  /**
   * Replace the room's stored updates by `merge(updates)`, atomically. Rows
   * appended meanwhile by another instance are kept. Resolves null when another
   * instance is compacting this room right now (it will do the work).
   */
  compact(room: string, merge: (updates: Uint8Array[]) => Uint8Array): Promise<CompactResult | null>
  /** Delete every stored update of `room` (its owner purged it). */
  drop(room: string): Promise<void>
  /** Stored bytes of each room of `user` (rooms named `<user>/…`). */
  usage(user: string): Promise<Map<string, number>>
  /** Refuse `user`'s tokens issued at or before `atMs` from now on, on every instance. */
  revoke(user: string, atMs: number): Promise<void>
  /** Every revocation: user → time (ms) before which their tokens are refused. */
  revocations(): Promise<Map<string, number>>
  /** Rooms whose rows cannot be read, found by a full integrity check (slow: startup only). */
  damagedRooms(): Promise<string[]>
  /** Flush write-ahead state and release the store. */
  close(): Promise<void>
}

/** What `load` returns. */
export interface StoredRoom {
  updates: Uint8Array[]
  bytes: number
}

/** What `compact` returns: the room's stored size and row count afterwards. */
export interface CompactResult {
  bytes: number
  rows: number
}

/** One update of one room, as queued for the store. */
export interface StoredUpdate {
  readonly room: string
  readonly update: Uint8Array
}

/** The user a room belongs to, as spelt in the room name (`u1/p` → `u1`): the key of their quotas. */
export const roomOwner: (room: string) => string = roomOwnerKey

/**
 * The canonical name of a room stored by an earlier relay, which decoded the
 * whole path (`u1/my project`): each `/`-separated part encoded again
 * (`u1/my%20project`). A name that held an encoded `/` was ambiguous then; it
 * is read as ids without `/`, the common case. Stores rename such rooms when
 * they open.
 */
export function migratedRoomName(stored: string): string {
  try {
    return roomName(...stored.split('/'))
  } catch {
    return stored // a lone surrogate: no client of this relay can name it anyway
  }
}
