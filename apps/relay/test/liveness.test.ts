import { afterAll, beforeAll, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { RelayProcess } from './relay-process.js'
import { encodeUpdate } from '../src/rooms/protocol.js'

// Two relays: a paused reader cannot answer pings either, so each test needs its own ping interval.
let fastPing: RelayProcess
let smallBuffers: RelayProcess
let relay: RelayProcess
beforeAll(async () => {
  ;[fastPing, smallBuffers] = await Promise.all([
    startRelay({ args: ['--ping-interval-ms', '200'] }),
    startRelay({ args: ['--max-buffered-bytes', '262144', '--messages-per-second', '1000', '--message-burst', '5000'] }),
  ])
})
afterAll(async () => {
  await Promise.all([fastPing.stop(), smallBuffers.stop()])
})

const open = async (room: string, options: { autoPong?: boolean } = {}): Promise<WebSocket> => {
  const ws = new WebSocket(`${relay.wsUrl}/${room}?token=${await tokenFor(room.split('/')[0] as string)}`, options)
  ws.on('error', () => {})
  await new Promise((resolve) => ws.once('message', resolve)) // the relay's sync step 1
  return ws
}
const closedWith = async (reason: string): Promise<number> => (await scrape(relay)).get(`engram_relay_connections_closed_total{reason="${reason}"}`) ?? 0

it('drops a socket that stops answering pings', async () => {
  relay = fastPing
  const ws = await open('olga/p', { autoPong: false })
  const closed = new Promise<number>((resolve) =>
    ws.once('close', (code) => {
      resolve(code)
    }),
  )
  const started = Date.now()
  expect(await closed).toBe(1006) // terminated, no closing handshake
  expect(Date.now() - started).toBeLessThan(3000)
  await waitFor(async () => (await closedWith('pingTimeout')) === 1, 5000, 'ping timeout metric')
})

it('disconnects a reader that lets more than --max-buffered-bytes queue up, and keeps serving the writer', async () => {
  relay = smallBuffers
  const slow = await open('paul/doc')
  ;(slow as unknown as { _socket: { pause(): void } })._socket.pause() // stop reading: the relay's send buffer fills
  const writer = await open('paul/doc')
  const source = new Y.Doc()
  source.on('update', (u: Uint8Array) => {
    writer.send(encodeUpdate(u))
  })
  const chunk = 'x'.repeat(50_000)
  for (let i = 0; i < 400 && (await closedWith('slowConsumer')) === 0; i++) {
    source.getText('t').insert(0, chunk)
    if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  await waitFor(async () => (await closedWith('slowConsumer')) === 1, 10_000, 'slow consumer to be closed')
  expect(writer.readyState).toBe(WebSocket.OPEN)
  writer.close()
  slow.terminate()
}, 30_000)
