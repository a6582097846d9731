/* The `meta` rows that mark a store's move into a fresh database (database-move.ts). */

/** The `meta` row of a store whose run finished and whose move is still to do: `{ kind, to }`. */
export const MOVE_META_KEY = 'encryption.move'
/** The `meta` row a move writes last, in the transaction that makes the new database complete. */
export const MOVED_META_KEY = 'encryption.moved'
