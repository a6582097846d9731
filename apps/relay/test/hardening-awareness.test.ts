import { afterAll, beforeAll, expect, it } from 'vitest'
import { scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { RelayProcess } from './relay-process.js'
import { awarenessClients, awarenessFrame, openRaw } from './raw-client.js'
import type { RawSocket } from './raw-client.js'
import { CloseCode } from '@engram/sync/close-codes'

/** A relay with the default limits, and one with small awareness budgets. */
let relay: RelayProcess
let small: RelayProcess
const sockets: RawSocket[] = []
const open = async (path: string, target = relay): Promise<RawSocket> => {
  const s = await openRaw(target, path)
  sockets.push(s)
  return s
}
beforeAll(async () => {
  ;[relay, small] = await Promise.all([
    startRelay(),
    startRelay({
      args: [
        '--max-message-bytes',
        '200000',
        '--max-awareness-bytes-per-connection',
        '100000',
        '--max-awareness-bytes-per-room',
        '500000',
        '--awareness-bytes-per-second',
        '1000000',
      ],
    }),
  ])
})
afterAll(async () => {
  for (const s of sockets) s.ws.terminate()
  await Promise.all([relay.stop(), small.stop()])
})

it('closes a connection whose awareness state passes its byte budget (64 KiB by default) with 4414, and keeps the heap flat', async () => {
  const token = await tokenFor('aw1')
  const heapBefore = (await scrape(relay, true)).get('nodejs_heap_used_bytes') as number
  const peer = await open(`aw1/room?token=${token}`)
  const big = await open(`aw1/room?token=${token}`)
  big.ws.send(awarenessFrame({ blob: 'x'.repeat(150_000) }).frame)
  expect(await big.closed).toBe(CloseCode.awarenessTooLarge)
  // Nothing of it reached the other peer: a later small state arrives alone.
  const marker = awarenessFrame({ name: 'marker' })
  const other = await open(`aw1/room?token=${token}`)
  other.ws.send(marker.frame)
  await waitFor(() => peer.frames.some((f) => awarenessClients(f).includes(marker.client)), 5000, 'the marker state')
  expect(Math.max(...peer.frames.map((f) => f.byteLength))).toBeLessThan(1000)
  const heapAfter = (await scrape(relay, true)).get('nodejs_heap_used_bytes') as number
  expect(heapAfter - heapBefore).toBeLessThan(20 * 1024 * 1024)
})

it('refuses awareness past the room budget and never sends a frame over the frame limit', async () => {
  const token = await tokenFor('aw2')
  const writers: RawSocket[] = []
  const clients: number[] = []
  // Five connections of 90 kB each fill the 500 kB room budget up to 450 kB.
  for (let i = 0; i < 5; i++) {
    const w = await open(`aw2/room?token=${token}`, small)
    const { frame, client } = awarenessFrame({ i, blob: 'y'.repeat(90_000) })
    w.ws.send(frame)
    writers.push(w)
    clients.push(client)
    await waitFor(() => w.frames.some((f) => awarenessClients(f).includes(client)), 5000, 'the echo of each state')
  }
  const sixth = await open(`aw2/room?token=${token}`, small)
  sixth.ws.send(awarenessFrame({ blob: 'z'.repeat(90_000) }).frame)
  expect(await sixth.closed).toBe(CloseCode.awarenessTooLarge)

  // A joiner receives all five states (450 kB), split into frames under 200 kB.
  const joiner = await open(`aw2/room?token=${token}`, small)
  await waitFor(() => clients.every((c) => joiner.frames.some((f) => awarenessClients(f).includes(c))), 5000, 'every state at the joiner')
  expect(Math.max(...joiner.frames.map((f) => f.byteLength))).toBeLessThanOrEqual(200_000)
  const m = await scrape(small)
  expect(m.get('engram_relay_connections_closed_total{reason="awarenessTooLarge"}')).toBe(1)
})
