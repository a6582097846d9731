/**
 * A room whose stored rows cannot be read or decoded (a corrupt SQLite page, a
 * truncated update). The relay refuses the room with `roomDamaged` and keeps
 * serving every other room; an operator restores it from a backup.
 */
export class RoomDamagedError extends Error {
  readonly room: string
  constructor(room: string, cause: unknown) {
    super(`room ${room} is damaged: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'RoomDamagedError'
    this.room = room
  }
}

/** Whether a SQLite error says the file is damaged rather than busy or full. */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB' || (typeof code === 'string' && code.startsWith('SQLITE_CORRUPT'))
}
