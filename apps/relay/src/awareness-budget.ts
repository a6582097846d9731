import * as decoding from 'lib0/decoding'
import * as awarenessProtocol from 'y-protocols/awareness'
import * as encoding from 'lib0/encoding'
import { MessageType } from './protocol.js'

/** One client's state in an awareness update, and its encoded size. */
export interface AwarenessEntry {
  client: number
  /** Bytes of the state's JSON; 0 for a removal (`null`). */
  bytes: number
}

/**
 * The clients an awareness update announces, with the size of each state.
 * Read without applying the update, so a budget can refuse it first.
 *
 * @throws Error when the update is truncated.
 */
export function readAwarenessEntries(update: Uint8Array): AwarenessEntry[] {
  const decoder = decoding.createDecoder(update)
  const count = decoding.readVarUint(decoder)
  const entries: AwarenessEntry[] = []
  for (let i = 0; i < count; i++) {
    const client = decoding.readVarUint(decoder)
    decoding.readVarUint(decoder) // clock
    const state = decoding.readVarString(decoder)
    entries.push({ client, bytes: state === 'null' ? 0 : Buffer.byteLength(state) })
  }
  return entries
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

/**
 * Awareness frames for `clients`, each at most `maxFrameBytes`: states are
 * grouped into as many frames as needed, and a state too large for any frame
 * is left out, so the relay never sends a frame a client's limit would refuse.
 */
export function encodeAwarenessFrames(awareness: awarenessProtocol.Awareness, clients: number[], maxFrameBytes: number): Uint8Array[] {
  const frames: Uint8Array[] = []
  let group: number[] = []
  let groupBytes = 0
  const frameOf = (ids: number[]): Uint8Array => {
    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, MessageType.awareness)
    encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(awareness, ids))
    return encoding.toUint8Array(encoder)
  }
  // Per-state overhead: client id, clock and length varints, the frame header.
  const overhead = 32
  for (const client of clients) {
    const state = awareness.getStates().get(client)
    const bytes = (state === undefined ? 4 : Buffer.byteLength(JSON.stringify(state))) + overhead
    if (bytes > maxFrameBytes) continue
    if (groupBytes + bytes > maxFrameBytes && group.length > 0) {
      frames.push(frameOf(group))
      group = []
      groupBytes = 0
    }
    group.push(client)
    groupBytes += bytes
  }
  if (group.length > 0) frames.push(frameOf(group))
  return frames
}
