/** Test helpers: a raw multiplexed (`/mux`) socket to the relay, and hand-built y-websocket sync frames. */
import { WebSocket } from 'ws'
import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'
import { decodeMuxFrame, encodeMuxFrame, type MuxFrame } from '@engram/sync/mux-frames'
import { waitFor } from './relay-process.js'

/** A raw multiplexed socket: every frame it received (decoded), and its close code. */
export interface MuxSocket {
  ws: WebSocket
  frames: MuxFrame[]
  closed: Promise<number>
  send(frame: MuxFrame): void
  /** Resolves with the first frame received from now on (or already received after `from`) that matches. */
  next(match: (frame: MuxFrame) => boolean, from?: number, what?: string): Promise<MuxFrame>
}

export async function openMux(relay: { wsUrl: string }, token: string): Promise<MuxSocket> {
  const ws = new WebSocket(`${relay.wsUrl}/mux?token=${token}`)
  const frames: MuxFrame[] = []
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))
  ws.on('message', (data: Buffer) => frames.push(decodeMuxFrame(new Uint8Array(data))))
  await new Promise((resolve, reject) => {
    ws.once('message', resolve)
    ws.once('error', reject)
    void closed.then(resolve)
  })
  return {
    ws,
    frames,
    closed,
    send: (frame) => ws.send(encodeMuxFrame(frame)),
    async next(match, from = 0, what = 'frame') {
      let found: MuxFrame | undefined
      await waitFor(() => (found = frames.slice(from).find(match)) !== undefined, 5000, what)
      return found as MuxFrame
    },
  }
}

/** A y-websocket sync frame of one step with `payload`. */
export const syncFrame = (step: number, payload: Uint8Array): Uint8Array => {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 0)
  encoding.writeVarUint(encoder, step)
  encoding.writeVarUint8Array(encoder, payload)
  return encoding.toUint8Array(encoder)
}

/** Whether a document message is a sync step 2 (the relay's answer to a step 1). */
export const isStep2 = (message: Uint8Array): boolean => {
  const decoder = decoding.createDecoder(message)
  return decoding.readVarUint(decoder) === 0 && decoding.readVarUint(decoder) === 1
}
