import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDeepStrictEqual } from 'node:util'
import { WebSocket } from 'ws'
import * as decoding from 'lib0/decoding'
import { vi } from 'vitest'
import { connectClient, scrape, startRelay, testSecret, tokenFor, waitFor } from './relay-process.js'
import { openRaw } from './raw-client.js'
import type { Client, RelayProcess } from './relay-process.js'
import { mintToken } from '../src/auth/tokens.js'
import { CloseCode } from '@engram/sync/close-codes'

let relay: RelayProcess
const clients: Client[] = []
const connect = (room: string, token: string | null): Client => {
  const c = connectClient(relay, room, token)
  clients.push(c)
  return c
}

beforeAll(async () => {
  relay = await startRelay()
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})

describe('relay sync with stock y-websocket clients', () => {
  it('two clients converge and a late joiner receives everything', async () => {
    const token = await tokenFor('alice')
    const a = connect('alice/notes', token)
    const b = connect('alice/notes', token)
    await Promise.all([a.synced, b.synced])
    a.doc.getMap('facts').set('color', 'blue')
    b.doc.getMap('facts').set('size', 'large')
    a.doc.getArray('log').push(['from-a'])
    b.doc.getArray('log').push(['from-b'])
    const same = (): boolean => isDeepStrictEqual(a.doc.toJSON(), b.doc.toJSON()) && a.doc.getArray('log').length === 2 && a.doc.getMap('facts').size === 2
    await waitFor(same, 5000, 'convergence')
    expect(a.doc.getMap('facts').toJSON()).toEqual({ color: 'blue', size: 'large' })

    const late = connect('alice/notes', token)
    await late.synced
    await waitFor(() => late.doc.getArray('log').length === 2, 5000, 'late joiner')
    expect(late.doc.getMap('facts').toJSON()).toEqual({ color: 'blue', size: 'large' })
    expect(late.doc.getArray('log').toJSON()).toEqual(a.doc.getArray('log').toJSON())
  })

  it('tells a client its scope and the relay clock before sync step 1 (and with each heartbeat); stock clients ignore both', async () => {
    const errors = vi.spyOn(console, 'error')
    const readKinds = (frames: Uint8Array[]) =>
      frames.map((frame) => {
        const d = decoding.createDecoder(frame)
        const type = decoding.readVarUint(d)
        if (type !== 2) return type === 0 ? `sync ${decoding.readVarUint(d)}` : `type ${type}`
        const kind = decoding.readVarUint(d)
        return kind === 2
          ? `scope ${decoding.readVarString(d)}`
          : kind === 3
            ? `time ${Math.abs(decoding.readVarUint(d) - Date.now()) < 60_000}`
            : `auth ${kind}`
      })
    const raw = await openRaw(relay, `carol/p?token=${await tokenFor('carol')}`)
    await waitFor(() => raw.frames.length >= 3, 5000, 'join frames')
    expect(readKinds(raw.frames).slice(0, 3)).toEqual(['scope read-write', 'time true', 'sync 0'])
    raw.frames.length = 0
    raw.ws.send(new Uint8Array([3])) // query awareness: the heartbeat
    await waitFor(() => readKinds(raw.frames).includes('time true'), 5000, 'time with the heartbeat')
    raw.ws.close()
    const viewer = await openRaw(relay, `carol/p?token=${await mintToken(testSecret, 'carol', 600, { scope: 'read' })}`)
    await waitFor(() => viewer.frames.length >= 1, 5000, 'viewer frames')
    expect(readKinds(viewer.frames)[0]).toBe('scope readonly')
    viewer.ws.close()
    // A stock client syncs as before and reports nothing it could not read.
    const a = connect('carol/p', await tokenFor('carol'))
    const b = connect('carol/p', await tokenFor('carol'))
    await Promise.all([a.synced, b.synced])
    a.doc.getMap('m').set('k', 'v')
    await waitFor(() => b.doc.getMap('m').get('k') === 'v', 5000, 'stock sync')
    a.provider.awareness.setLocalStateField('user', { name: 'A' })
    await waitFor(() => b.provider.awareness.getStates().has(a.doc.clientID), 5000, 'awareness')
    expect(errors.mock.calls.map((c) => String(c[0]))).not.toContain('Unable to compute message')
    errors.mockRestore()
  })

  it('relays awareness between clients in a room', async () => {
    const token = await tokenFor('bob')
    const a = connect('bob/p', token)
    const b = connect('bob/p', token)
    await Promise.all([a.synced, b.synced])
    a.provider.awareness.setLocalStateField('user', { name: 'A' })
    await waitFor(() => b.provider.awareness.getStates().get(a.doc.clientID) !== undefined, 5000, 'awareness')
    expect(b.provider.awareness.getStates().get(a.doc.clientID)).toEqual({ user: { name: 'A' } })
  })

  it('answers /healthz', async () => {
    const res = await fetch(`${relay.httpUrl}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok' })
  })
})

describe('refusals before any document is loaded', () => {
  const cases: Array<[string, () => Promise<{ room: string; token: string | null }>, number]> = [
    ['no token', async () => ({ room: 'carol/p', token: null }), CloseCode.tokenMissing],
    ['garbage token', async () => ({ room: 'carol/p', token: 'not.a.jwt' }), CloseCode.tokenInvalid],
    ['bad signature', async () => ({ room: 'carol/p', token: await mintToken('some-other-secret-0123456789abcdef', 'carol') }), CloseCode.tokenInvalid],
    ['expired', async () => ({ room: 'carol/p', token: await tokenFor('carol', -10) }), CloseCode.tokenExpired],
    ["another user's room", async () => ({ room: 'dave/p', token: await tokenFor('carol') }), CloseCode.roomForbidden],
    ['a room that is only the user name', async () => ({ room: 'carol', token: await tokenFor('carol') }), CloseCode.roomForbidden],
  ]
  it.each(cases)('%s', async (_name, make, code) => {
    const before = await scrape(relay)
    const { room, token } = await make()
    const c = connect(room, token)
    expect(await c.firstClose).toBe(code)
    // 44xx is permanent for the stock client: it stops reconnecting.
    expect(c.provider.shouldConnect).toBe(false)
    const after = await scrape(relay)
    expect(after.get('engram_relay_documents_loaded_total')).toBe(before.get('engram_relay_documents_loaded_total'))
    expect(after.get('engram_relay_connections_opened_total')).toBe(before.get('engram_relay_connections_opened_total'))
    c.destroy()
  })

  it('never writes a token to the logs', async () => {
    const token = await tokenFor('erin', -10)
    const c = connect('erin/p', token)
    await c.firstClose
    c.destroy()
    expect(relay.output.join('\n')).not.toContain(token.split('.')[2])
    expect(relay.output.join('\n')).toContain('"reason":"tokenExpired"')
  })
})

describe('oversized frames', () => {
  it('closes a socket sending more than 1 MiB with 1009 and keeps the room', async () => {
    const token = await tokenFor('frank')
    const ws = new WebSocket(`${relay.wsUrl}/frank/big?token=${token}`)
    await new Promise((resolve) => ws.once('open', resolve))
    const closed = new Promise<number>((resolve) =>
      ws.once('close', (code) => {
        resolve(code)
      }),
    )
    ws.send(new Uint8Array(1024 * 1024 + 16))
    expect(await closed).toBe(CloseCode.messageTooBig)
    await waitFor(async () => (await scrape(relay)).get('engram_relay_connections_closed_total{reason="messageTooBig"}') === 1, 5000, 'close metric')
    // The room itself still works for well-behaved clients.
    const c = connect('frank/big', token)
    await c.synced
  })
})
