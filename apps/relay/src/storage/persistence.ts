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

/** The user a room belongs to (`u1/p` → `u1`). */
export function roomOwner(room: string): string {
  const at = room.indexOf('/')
  return at < 0 ? room : room.slice(0, at)
}
