import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import * as awarenessProtocol from 'y-protocols/awareness'
import type { AwarenessEntry } from '../limits/awareness-budget.js'
import { MessageType } from './protocol.js'

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
