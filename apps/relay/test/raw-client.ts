/** Test helpers: a raw WebSocket to the relay, and hand-built y-websocket frames. */
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import * as awarenessProtocol from 'y-protocols/awareness'
import type { RelayProcess } from './relay-process.js'

/** A raw socket: every frame it received, and its close code. */
export interface RawSocket {
  ws: WebSocket
  frames: Uint8Array[]
  closed: Promise<number>
}

/** Open `path` (`u1/room?token=…`) and resolve once the relay's first frame arrived. */
export async function openRaw(relay: RelayProcess, path: string): Promise<RawSocket> {
  const ws = new WebSocket(`${relay.wsUrl}/${path}`)
  const frames: Uint8Array[] = []
  const closed = new Promise<number>((resolve) =>
    ws.once('close', (code) => {
      resolve(code)
    }),
  )
  ws.on('message', (data: Buffer) => {
    frames.push(new Uint8Array(data))
  })
  await new Promise((resolve, reject) => {
    ws.once('message', resolve)
    ws.once('error', reject)
    void closed.then(resolve)
  })
  return { ws, frames, closed }
}

/** An awareness frame announcing one fresh client with `state`. */
export function awarenessFrame(state: Record<string, unknown>): { frame: Uint8Array; client: number } {
  const doc = new Y.Doc()
  const awareness = new awarenessProtocol.Awareness(doc)
  awareness.setLocalState(state)
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 1)
  encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(awareness, [doc.clientID]))
  awareness.destroy()
  return { frame: encoding.toUint8Array(encoder), client: doc.clientID }
}

/** The awareness clients announced (non-null) in a frame, or none when it is not an awareness frame. */
export function awarenessClients(frame: Uint8Array): number[] {
  if (frame[0] !== 1) return []
  const target = new awarenessProtocol.Awareness(new Y.Doc())
  target.setLocalState(null)
  const decoder = decoding.createDecoder(frame)
  decoding.readVarUint(decoder)
  awarenessProtocol.applyAwarenessUpdate(target, decoding.readVarUint8Array(decoder), null)
  const clients = Array.from(target.getStates().keys())
  target.destroy()
  return clients
}
