import type { RelayStore } from '../storage/persistence.js'

/** Why a user's write or document is refused. */
export type QuotaReason = 'roomQuotaExceeded' | 'byteQuotaExceeded'

/**
 * What a user costs the relay: the documents they have open (live, over all
 * their connections: closing one frees it) and the bytes they store (read
 * from the store when their first connection arrives, kept up to date by the
 * rooms while they have one; dropping a document frees its bytes). With
 * several instances each keeps its own view, refreshed at every first
 * connection. Users are keyed as rooms spell their owner (`roomOwner`).
 */
export interface UserQuotas {
  /** Read the user's stored bytes (once per active user). Pair with `release`. */
  acquire(user: string): Promise<void>
  /** The user's last connection left: forget their figures. */
  release(user: string): void
  /**
   * Count `room` as open for `user` once more; false (counting nothing) when it is not open
   * yet and the user already has `maxDocumentsPerUser` documents open.
   */
  openDocument(user: string, room: string): boolean
  /** One of the user's links closed `room`. */
  closeDocument(user: string, room: string): void
  /** Whether storing `bytes` more in `room` passes the byte quota. */
  check(user: string, room: string, bytes: number): QuotaReason | null
  /** `bytes` were stored in `room`. */
  add(user: string, room: string, bytes: number): void
  /** `room` now stores `bytes` (after a compaction; 0 after a drop). */
  set(user: string, room: string, bytes: number): void
  /** The largest figures among active users, for `/metrics`: documents open, bytes stored. */
  peak(): { rooms: number; bytes: number }
}

interface Usage {
  refs: number
  rooms: Map<string, number>
  bytes: number
  ready: Promise<void>
}

/**
 * Track quotas over `store`.
 *
 * @example
 * const quotas = createUserQuotas(store, { maxDocumentsPerUser: 1000, maxBytesPerUser: 256 * 2 ** 20 })
 */
export function createUserQuotas(store: RelayStore, limits: { maxDocumentsPerUser: number; maxBytesPerUser: number }): UserQuotas {
  const users = new Map<string, Usage>()
  /** Open documents per user: room → how many of the user's links hold it. */
  const open = new Map<string, Map<string, number>>()
  const release = (user: string): void => {
    const usage = users.get(user)
    if (usage === undefined) return
    if (--usage.refs <= 0) users.delete(user)
  }
  return {
    async acquire(user) {
      let usage = users.get(user)
      if (usage === undefined) {
        const fresh: Usage = { refs: 0, rooms: new Map(), bytes: 0, ready: Promise.resolve() }
        fresh.ready = store.usage(user).then((rooms) => {
          for (const [room, bytes] of rooms) {
            fresh.rooms.set(room, bytes + (fresh.rooms.get(room) ?? 0))
            fresh.bytes += bytes
          }
        })
        users.set(user, fresh)
        usage = fresh
      }
      usage.refs++
      try {
        await usage.ready
      } catch (err) {
        release(user)
        throw err
      }
    },
    release,
    openDocument(user, room) {
      let docs = open.get(user)
      if (docs === undefined) open.set(user, (docs = new Map()))
      const refs = docs.get(room)
      if (refs === undefined && docs.size >= limits.maxDocumentsPerUser) return false
      docs.set(room, (refs ?? 0) + 1)
      return true
    },
    closeDocument(user, room) {
      const docs = open.get(user)
      const refs = docs?.get(room)
      if (docs === undefined || refs === undefined) return
      if (refs > 1) docs.set(room, refs - 1)
      else docs.delete(room)
      if (docs.size === 0) open.delete(user)
    },
    check(user, _room, bytes) {
      const usage = users.get(user)
      if (usage === undefined) return null
      if (usage.bytes + bytes > limits.maxBytesPerUser) return 'byteQuotaExceeded'
      return null
    },
    add(user, room, bytes) {
      const usage = users.get(user)
      if (usage === undefined) return
      usage.rooms.set(room, (usage.rooms.get(room) ?? 0) + bytes)
      usage.bytes += bytes
    },
    set(user, room, bytes) {
      const usage = users.get(user)
      if (usage === undefined) return
      usage.bytes += bytes - (usage.rooms.get(room) ?? 0)
      if (bytes === 0) usage.rooms.delete(room)
      else usage.rooms.set(room, bytes)
    },
    peak() {
      let rooms = 0
      let bytes = 0
      for (const docs of open.values()) rooms = Math.max(rooms, docs.size)
      for (const usage of users.values()) bytes = Math.max(bytes, usage.bytes)
      return { rooms, bytes }
    },
  }
}
