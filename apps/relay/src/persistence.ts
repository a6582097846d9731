/**
 * The durable store behind the relay. Every method is synchronous on purpose:
 * an update is on disk when `append` returns, before the relay broadcasts it.
 */
export interface RelayStore {
  /** All stored updates of a room, oldest first, with the id of the last one (0 if none). */
  load (room: string): { updates: Uint8Array[], lastId: number, bytes: number }
  /** Store one update durably; returns its id. */
  append (room: string, update: Uint8Array): number
  /** Replace the room's updates with ids up to `uptoId` by one snapshot, atomically. */
  compact (room: string, snapshot: Uint8Array, uptoId: number): number
  /** Flush write-ahead state and release the store. */
  close (): Promise<void>
}
