import { afterAll, beforeAll, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import * as decoding from 'lib0/decoding'
import { CloseCode } from '@engram/sync/close-codes'
import { roomName } from '@engram/sync/room-name'
import { isStep2, openMux, syncFrame } from './mux-client.js'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { RelayProcess } from './relay-process.js'

let relay: RelayProcess
beforeAll(async () => {
  relay = await startRelay({ args: ['--mux-messages-per-second', '50', '--mux-message-burst', '200', '--max-documents-per-user', '4'] })
})
afterAll(async () => {
  await relay.stop()
})

it("sends its time first, answers a ping with it, and refuses one document (another user's room) without closing the socket", async () => {
  const mux = await openMux(relay, await tokenFor('mx'))
  try {
    expect(mux.frames[0]).toMatchObject({ type: 'time' })
    expect(Math.abs((mux.frames[0] as { time: number }).time - Date.now())).toBeLessThan(5000)

    const mine = roomName('mx', 'p')
    mux.send({ type: 'open', room: mine })
    mux.send({ type: 'open', room: roomName('other', 'p') })
    mux.send({ type: 'open', room: 'mx/a%ZZ' })
    expect(await mux.next((f) => f.type === 'refused' && f.room === 'other/p')).toMatchObject({ code: CloseCode.roomForbidden, reason: 'roomForbidden' })
    expect(await mux.next((f) => f.type === 'refused' && f.room === 'mx/a%ZZ')).toMatchObject({ code: CloseCode.roomInvalid })

    // The document that passed syncs: its own scope, time and step 1 arrive, an update is stored and answered.
    await mux.next((f) => f.type === 'message' && f.room === mine, 0, 'first message of the document')
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'through the shared socket')
    mux.send({ type: 'message', room: mine, message: syncFrame(2, Y.encodeStateAsUpdate(doc)) })
    const from = mux.frames.length
    mux.send({ type: 'message', room: mine, message: syncFrame(0, Y.encodeStateVector(new Y.Doc())) })
    const step2 = await mux.next((f) => f.type === 'message' && f.room === mine && isStep2(f.message), from, 'step 2')
    const copy = new Y.Doc()
    const decoder = decoding.createDecoder((step2 as { message: Uint8Array }).message)
    decoding.readVarUint(decoder)
    decoding.readVarUint(decoder)
    Y.applyUpdate(copy, decoding.readVarUint8Array(decoder))
    expect(copy.getText('t').toString()).toBe('through the shared socket')

    // A stock client on the room's own socket sees the same document.
    const stock = connectClient(relay, mine, await tokenFor('mx'))
    await waitFor(() => stock.doc.getText('t').toString() === 'through the shared socket', 5000, 'stock client synced')
    stock.destroy()

    const beforePing = mux.frames.length
    mux.send({ type: 'ping' })
    expect(await mux.next((f) => f.type === 'time', beforePing, 'time after ping')).toMatchObject({ type: 'time' })
    expect(mux.ws.readyState).toBe(WebSocket.OPEN)
    const m = await scrape(relay)
    expect(m.get('engram_relay_documents_refused_total{reason="roomForbidden"}')).toBe(1)
    expect(m.get('engram_relay_mux_connections')).toBe(1)
  } finally {
    mux.ws.close()
  }
})

it('counts the documents of the user over every socket: one past --max-documents-per-user is refused with 4405 and opens once another closes', async () => {
  const token = await tokenFor('mq')
  const mux = await openMux(relay, token)
  try {
    for (const name of ['a', 'b', 'c', 'd']) mux.send({ type: 'open', room: roomName('mq', name) })
    await waitFor(() => ['a', 'b', 'c', 'd'].every((n) => mux.frames.some((f) => f.type === 'message' && f.room === `mq/${n}`)), 5000, 'four open')
    mux.send({ type: 'open', room: 'mq/e' })
    expect(await mux.next((f) => f.type === 'refused' && f.room === 'mq/e')).toMatchObject({ code: CloseCode.roomQuotaExceeded })
    mux.send({ type: 'close', room: 'mq/a' })
    const from = mux.frames.length
    mux.send({ type: 'open', room: 'mq/e' })
    await mux.next((f) => f.type === 'message' && f.room === 'mq/e', from, 'e open after a closed')
  } finally {
    mux.ws.close()
  }
})

it('drops a room for its owner only: storage and bytes go, a stock client of the room is closed with 4411', async () => {
  const owner = await openMux(relay, await tokenFor('md'))
  const stranger = await openMux(relay, await tokenFor('ms'))
  try {
    const room = roomName('md', 'gone')
    owner.send({ type: 'open', room })
    await owner.next((f) => f.type === 'message' && f.room === room)
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'x'.repeat(5000))
    owner.send({ type: 'message', room, message: syncFrame(2, Y.encodeStateAsUpdate(doc)) })
    const stock = connectClient(relay, room, await tokenFor('md'))
    await waitFor(() => stock.doc.getText('t').length === 5000, 5000, 'stock client synced')

    stranger.send({ type: 'drop', room })
    expect(await stranger.next((f) => f.type === 'dropped')).toMatchObject({ room, code: CloseCode.roomForbidden })

    owner.send({ type: 'close', room })
    owner.send({ type: 'drop', room })
    expect(await owner.next((f) => f.type === 'dropped')).toMatchObject({ room, code: 0 })
    expect(await stock.firstClose).toBe(CloseCode.documentDropped)
    stock.destroy()
    // Opened again, the room is empty.
    const fresh = connectClient(relay, room, await tokenFor('md'))
    await fresh.synced
    expect(fresh.doc.getText('t').length).toBe(0)
    fresh.destroy()
    expect((await scrape(relay)).get('engram_relay_documents_dropped_total')).toBe(1)
  } finally {
    owner.ws.close()
    stranger.ws.close()
  }
})

it('closes the socket past --mux-messages-per-second (4529) and on a frame that does not decode (4400)', async () => {
  const fast = await openMux(relay, await tokenFor('mr'))
  for (let i = 0; i < 400; i++) fast.send({ type: 'ping' })
  expect(await fast.closed).toBe(CloseCode.rateLimited)
  const bad = await openMux(relay, await tokenFor('mr'))
  bad.ws.send(new Uint8Array([99, 1, 2]))
  expect(await bad.closed).toBe(CloseCode.malformedMessage)
  const noToken = new WebSocket(`${relay.wsUrl}/mux`)
  expect(await new Promise((resolve) => noToken.once('close', resolve))).toBe(CloseCode.tokenMissing)
})
