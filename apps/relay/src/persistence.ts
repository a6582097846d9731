/**
 * The durable store behind the relay. Every method is synchronous on purpose:
 * updates are on disk when `appendMany` returns, before the relay broadcasts them.
 */
export interface RelayStore {
  /** All stored updates of a room, oldest first, and their total size. */
  load(room: string): { updates: Uint8Array[]; bytes: number }
  /** Store updates of any rooms durably, all or none (one transaction). */
  appendMany(entries: ReadonlyArray<StoredUpdate>): void
  /** Replace every stored update of the room by one snapshot, atomically. */
  compact(room: string, snapshot: Uint8Array): void
  /** Flush write-ahead state and release the store. */
  close(): Promise<void>
}

/** One update of one room, as queued for the store. */
export interface StoredUpdate {
  readonly room: string
  readonly update: Uint8Array
}
