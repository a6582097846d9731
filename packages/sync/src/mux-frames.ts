import * as decoding from 'lib0/decoding'
import * as encoding from 'lib0/encoding'

/**
 * The wire format of the relay's multiplexed endpoint (`/mux`): one WebSocket
 * per device carries the y-websocket messages of every document it opened,
 * each framed with its document's room name. Shared by the relay
 * (`@engram/sync/mux-frames`) and the client, so the two cannot drift apart.
 *
 * Every frame is a lib0 varuint type, then its fields (lib0 encoding):
 * | type | name | fields | direction |
 * |---|---|---|---|
 * | 0 | `open` | room (varString) | client → relay: open the document on this socket (the relay authorises it as a room) |
 * | 1 | `close` | room | client → relay: the client no longer needs it (its quota slot is freed) |
 * | 2 | `message` | room, message (varUint8Array: a y-websocket frame) | both ways |
 * | 3 | `refused` | room, code (varuint, a `CloseCode`), reason (varString) | relay → client: the document is closed on this socket, the socket stays |
 * | 4 | `time` | epoch ms (varuint) | relay → client: the first frame of every socket, and the answer to `ping` |
 * | 5 | `ping` | — | client → relay: liveness probe |
 * | 6 | `drop` | room | client → relay: the owner purged the document: delete it (storage and quota) |
 * | 7 | `dropped` | room, code (varuint: 0 done, else a `CloseCode`) | relay → client: the answer to `drop` |
 */
export const MuxFrameType = { open: 0, close: 1, message: 2, refused: 3, time: 4, ping: 5, drop: 6, dropped: 7 } as const

/** One frame of the multiplexed protocol. */
export type MuxFrame =
  | { type: 'open'; room: string }
  | { type: 'close'; room: string }
  | { type: 'message'; room: string; message: Uint8Array }
  | { type: 'refused'; room: string; code: number; reason: string }
  | { type: 'time'; time: number }
  | { type: 'ping' }
  | { type: 'drop'; room: string }
  | { type: 'dropped'; room: string; code: number }

/** The path of the multiplexed endpoint on the relay. */
export const MUX_PATH = '/mux'

/** Bytes a `message` frame adds to its y-websocket message at most, beside the room name's UTF-8 bytes. */
export const MUX_FRAME_OVERHEAD = 16

/** Encodes one frame. */
export function encodeMuxFrame(frame: MuxFrame): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MuxFrameType[frame.type])
  switch (frame.type) {
    case 'time':
      encoding.writeVarUint(encoder, Math.max(0, Math.floor(frame.time)))
      break
    case 'ping':
      break
    case 'message':
      encoding.writeVarString(encoder, frame.room)
      encoding.writeVarUint8Array(encoder, frame.message)
      break
    case 'refused':
      encoding.writeVarString(encoder, frame.room)
      encoding.writeVarUint(encoder, frame.code)
      encoding.writeVarString(encoder, frame.reason)
      break
    case 'dropped':
      encoding.writeVarString(encoder, frame.room)
      encoding.writeVarUint(encoder, frame.code)
      break
    default:
      encoding.writeVarString(encoder, frame.room)
  }
  return encoding.toUint8Array(encoder)
}

/**
 * Decodes one frame.
 * @throws Error when the bytes are not exactly one frame (unknown type, truncated, trailing bytes).
 */
export function decodeMuxFrame(data: Uint8Array): MuxFrame {
  const decoder = decoding.createDecoder(data)
  const type = decoding.readVarUint(decoder)
  let frame: MuxFrame
  switch (type) {
    case MuxFrameType.open:
      frame = { type: 'open', room: decoding.readVarString(decoder) }
      break
    case MuxFrameType.close:
      frame = { type: 'close', room: decoding.readVarString(decoder) }
      break
    case MuxFrameType.message:
      frame = { type: 'message', room: decoding.readVarString(decoder), message: decoding.readVarUint8Array(decoder) }
      break
    case MuxFrameType.refused:
      frame = { type: 'refused', room: decoding.readVarString(decoder), code: decoding.readVarUint(decoder), reason: decoding.readVarString(decoder) }
      break
    case MuxFrameType.time:
      frame = { type: 'time', time: decoding.readVarUint(decoder) }
      break
    case MuxFrameType.ping:
      frame = { type: 'ping' }
      break
    case MuxFrameType.drop:
      frame = { type: 'drop', room: decoding.readVarString(decoder) }
      break
    case MuxFrameType.dropped:
      frame = { type: 'dropped', room: decoding.readVarString(decoder), code: decoding.readVarUint(decoder) }
      break
    default:
      throw new Error(`unknown mux frame type ${type}`)
  }
  if (decoder.pos !== data.byteLength) throw new Error('trailing bytes after a mux frame')
  return frame
}
