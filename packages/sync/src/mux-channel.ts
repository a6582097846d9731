import type { MuxSocket } from './mux-socket.js'
import type { SessionSocket } from './relay-session.js'

/** One document's channel on the multiplexed socket, seen by a relay session as its WebSocket. */
export interface MuxChannel extends SessionSocket {
  /** A y-websocket message of the relay for this document. */
  deliver(message: Uint8Array): void
  /** The relay refused the document, or the socket went down: the channel is over. */
  end(code: number, reason: string): void
}

/**
 * Opens `room` on `socket` (an `open` frame) and speaks for it as a WebSocket
 * would: `send` wraps each y-websocket message in a `message` frame, `close`
 * sends `close`, and the relay's refusal or the socket's end arrives as
 * `onclose` with its code. It opens at once (the socket is up): the relay
 * handles a document's frames in order, also while it loads it.
 */
export function openMuxChannel(socket: MuxSocket, room: string): MuxChannel {
  let readyState = 0
  const channel: MuxChannel = {
    binaryType: 'arraybuffer',
    get readyState() {
      return readyState
    },
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
    send(data) {
      if (readyState === 1) socket.send({ type: 'message', room, message: data })
    },
    close() {
      if (readyState >= 2) return
      readyState = 3
      socket.send({ type: 'close', room })
    },
    deliver(message) {
      if (readyState !== 1) return
      channel.onmessage?.({ data: message.slice().buffer } as MessageEvent)
    },
    end(code, reason) {
      if (readyState === 3) return
      readyState = 3
      channel.onclose?.({ code, reason } as CloseEvent)
    },
  }
  socket.send({ type: 'open', room })
  queueMicrotask(() => {
    if (readyState !== 0) return
    readyState = 1
    channel.onopen?.({} as Event)
  })
  return channel
}
