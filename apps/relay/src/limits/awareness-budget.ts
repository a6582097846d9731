/** One client's state in an awareness update, and its encoded size. */
export interface AwarenessEntry {
  client: number
  /** Bytes of the state's JSON; 0 for a removal (`null`). */
  bytes: number
}

/**
 * The awareness bytes a room holds, by client, with the two budgets: bytes
 * announced by one connection, and bytes held by the whole room. Without
 * them one connection can park hundreds of megabytes of presence state that
 * every joiner then receives.
 */
export interface AwarenessLedger {
  /**
   * Whether `owned` (the clients of one connection) may announce `entries`:
   * false when its own bytes or the room's would pass their budget. `null`
   * (another instance's connections, budgeted there) checks the room only.
   * Records the new sizes when it returns true.
   */
  admit(owned: ReadonlySet<number> | null, entries: AwarenessEntry[]): boolean
  /** Drop removed clients' sizes. */
  forget(clients: Iterable<number>): void
  /** Bytes held by the room now. */
  readonly bytes: number
}

/** Create a room's ledger. */
export function createAwarenessLedger(maxPerConnection: number, maxPerRoom: number): AwarenessLedger {
  const sizes = new Map<number, number>()
  let total = 0
  return {
    admit(owned, entries) {
      const after = new Map<number, number>()
      for (const client of owned ?? []) after.set(client, sizes.get(client) ?? 0)
      let room = total
      for (const { client, bytes } of entries) {
        room += bytes - (sizes.get(client) ?? 0)
        after.set(client, bytes)
      }
      let own = 0
      for (const bytes of after.values()) own += bytes
      if ((owned !== null && own > maxPerConnection) || room > maxPerRoom) return false
      for (const { client, bytes } of entries) {
        total += bytes - (sizes.get(client) ?? 0)
        if (bytes === 0) sizes.delete(client)
        else sizes.set(client, bytes)
      }
      return true
    },
    forget(clients) {
      for (const client of clients) {
        total -= sizes.get(client) ?? 0
        sizes.delete(client)
      }
    },
    get bytes() {
      return total
    },
  }
}
