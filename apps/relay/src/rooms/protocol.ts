import * as encoding from 'lib0/encoding'
import * as syncProtocol from 'y-protocols/sync'
import * as awarenessProtocol from 'y-protocols/awareness'
import type * as Y from 'yjs'

/** y-websocket message types (first varuint of every frame). */
export const MessageType = { sync: 0, awareness: 1, auth: 2, queryAwareness: 3 } as const

/**
 * Auth messages after y-protocols' `permission denied` (0). The stock y-websocket client reads
 * an auth message's kind and ignores every kind but 0, so it tolerates these; Engram's client reads
 * them: the token's scope (as Hocuspocus sends it) and the relay's clock, from which every device
 * learns its clock's offset.
 */
export const AuthKind = { permissionDenied: 0, scope: 2, time: 3 } as const

/** The token's scope: `readonly` (the relay drops its writes) or `read-write`. */
export function encodeScope(readOnly: boolean): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MessageType.auth)
  encoding.writeVarUint(encoder, AuthKind.scope)
  encoding.writeVarString(encoder, readOnly ? 'readonly' : 'read-write')
  return encoding.toUint8Array(encoder)
}

/** The relay's clock now (epoch ms). */
export function encodeTime(now: number): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MessageType.auth)
  encoding.writeVarUint(encoder, AuthKind.time)
  encoding.writeVarUint(encoder, Math.max(0, Math.floor(now)))
  return encoding.toUint8Array(encoder)
}

/** A sync-step-1 frame announcing the doc's state vector. */
export function encodeSyncStep1(doc: Y.Doc): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MessageType.sync)
  syncProtocol.writeSyncStep1(encoder, doc)
  return encoding.toUint8Array(encoder)
}

/** A sync-update frame carrying one Yjs update. */
export function encodeUpdate(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MessageType.sync)
  syncProtocol.writeUpdate(encoder, update)
  return encoding.toUint8Array(encoder)
}

/** An awareness frame for the given clients' states. */
export function encodeAwareness(awareness: awarenessProtocol.Awareness, clients: number[]): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MessageType.awareness)
  encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(awareness, clients))
  return encoding.toUint8Array(encoder)
}
