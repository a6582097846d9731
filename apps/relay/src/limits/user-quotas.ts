import type { RelayStore } from '../storage/persistence.js'

/** Why a user's write or new room is refused. */
export type QuotaReason = 'roomQuotaExceeded' | 'byteQuotaExceeded'

/**
 * Rooms and stored bytes per user. A user's figures are read from the store
 * when their first connection arrives and kept up to date by the rooms while
 * they have one; with several instances each keeps its own view, refreshed
 * at every first connection.
 */
export interface UserQuotas {
  /** Read the user's figures (once per active user). Pair with `release`. */
  acquire(user: string): Promise<void>
  /** The user's last connection left: forget their figures. */
  release(user: string): void
  /** Whether the user may open `room` (a stored room, or a new one within `maxRoomsPerUser`). */
  mayOpen(user: string, room: string): boolean
  /** Whether storing `bytes` more in `room` passes a quota, and which. */
  check(user: string, room: string, bytes: number): QuotaReason | null
  /** `bytes` were stored in `room`. */
  add(user: string, room: string, bytes: number): void
  /** `room` now stores `bytes` (after a compaction). */
  set(user: string, room: string, bytes: number): void
  /** The largest figures among active users, for `/metrics`. */
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
 * const quotas = createUserQuotas(store, { maxRoomsPerUser: 1000, maxBytesPerUser: 256 * 2 ** 20 })
 */
export function createUserQuotas(store: RelayStore, limits: { maxRoomsPerUser: number; maxBytesPerUser: number }): UserQuotas {
  const users = new Map<string, Usage>()
  const usageOf = (user: string): Usage | undefined => users.get(user)
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
    mayOpen(user, room) {
      const usage = usageOf(user)
      return usage === undefined || usage.rooms.has(room) || usage.rooms.size < limits.maxRoomsPerUser
    },
    check(user, room, bytes) {
      const usage = usageOf(user)
      if (usage === undefined) return null
      if (!usage.rooms.has(room) && usage.rooms.size >= limits.maxRoomsPerUser) return 'roomQuotaExceeded'
      if (usage.bytes + bytes > limits.maxBytesPerUser) return 'byteQuotaExceeded'
      return null
    },
    add(user, room, bytes) {
      const usage = usageOf(user)
      if (usage === undefined) return
      usage.rooms.set(room, (usage.rooms.get(room) ?? 0) + bytes)
      usage.bytes += bytes
    },
    set(user, room, bytes) {
      const usage = usageOf(user)
      if (usage === undefined) return
      usage.bytes += bytes - (usage.rooms.get(room) ?? 0)
      usage.rooms.set(room, bytes)
    },
    peak() {
      let rooms = 0
      let bytes = 0
      for (const usage of users.values()) {
        rooms = Math.max(rooms, usage.rooms.size)
        bytes = Math.max(bytes, usage.bytes)
      }
      return { rooms, bytes }
    },
  }
}
