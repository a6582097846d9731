import { afterAll, beforeAll, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import * as awarenessProtocol from 'y-protocols/awareness'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'
import { encodeUpdate } from '../src/rooms/protocol.js'

const seed = Number(process.env.RELAY_FUZZ_SEED ?? Date.now() % 1_000_000)
/** mulberry32: small seeded PRNG so a failure replays with RELAY_FUZZ_SEED. */
function prng(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(seed)
const int = (n: number): number => Math.floor(random() * n)
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => int(256))

type Kind = 'unknown-type' | 'truncated-update' | 'truncated-awareness' | 'trailing-bytes' | 'text' | 'empty' | 'random-update'

function validUpdateMessage(): Uint8Array {
  const doc = new Y.Doc()
  doc.getMap('m').set('k' + int(1000), 'v'.repeat(1 + int(40)))
  return encodeUpdate(Y.encodeStateAsUpdate(doc))
}
function validAwarenessMessage(): Uint8Array {
  const doc = new Y.Doc()
  const awareness = new awarenessProtocol.Awareness(doc)
  awareness.setLocalState({ name: 'x'.repeat(1 + int(30)) })
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 1)
  encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(awareness, [doc.clientID]))
  awareness.destroy()
  return encoding.toUint8Array(encoder)
}
const cut = (m: Uint8Array): Uint8Array => m.subarray(0, 1 + int(m.length - 1))

function frame(kind: Kind): Uint8Array | string {
  switch (kind) {
    case 'unknown-type':
      return Uint8Array.from([4 + int(124), ...bytes(int(64))])
    case 'truncated-update':
      return cut(validUpdateMessage())
    case 'truncated-awareness':
      return cut(validAwarenessMessage())
    case 'trailing-bytes':
      return Uint8Array.from([...validUpdateMessage(), ...bytes(1 + int(8))])
    case 'text':
      return 'hello ' + int(1e9)
    case 'empty':
      return new Uint8Array(0)
    case 'random-update': {
      const body = bytes(1 + int(64))
      return Uint8Array.from([0, 2, body.length, ...body])
    }
  }
}
const kinds: Kind[] = ['unknown-type', 'truncated-update', 'truncated-awareness', 'trailing-bytes', 'text', 'empty', 'random-update']

/** Open a socket, wait for the relay's sync step 1, send one frame, then a valid sync step 1. */
async function probe(relay: RelayProcess, token: string, payload: Uint8Array | string): Promise<{ closedWith: number | null }> {
  const ws = new WebSocket(`${relay.wsUrl}/fuzz/room?token=${token}`)
  return await new Promise((resolve, reject) => {
    let sent = false
    ws.on('error', reject)
    ws.on('message', (data: Buffer) => {
      if (!sent) {
        sent = true
        ws.send(payload)
        ws.send(Uint8Array.from([0, 0, 1, 0])) // sync step 1, empty state vector
      } else if (data[0] === 0 && data[1] === 1) {
        ws.close()
        resolve({ closedWith: null }) // accepted: the relay answered with sync step 2
      }
    })
    ws.on('close', (code) => {
      resolve({ closedWith: code })
    })
  })
}

let relay: RelayProcess
let a: Client
let b: Client
beforeAll(async () => {
  relay = await startRelay()
  const token = await tokenFor('calm')
  a = connectClient(relay, 'calm/room', token)
  b = connectClient(relay, 'calm/room', token)
  await Promise.all([a.synced, b.synced])
})
afterAll(async () => {
  a.destroy()
  b.destroy()
  await relay.stop()
})

it(`1,000 malformed frames close their sockets and leave other rooms working (seed ${seed})`, async () => {
  console.log(`relay fuzz seed ${seed} (replay with RELAY_FUZZ_SEED=${seed})`)
  const token = await tokenFor('fuzz')
  const total = 1000
  const results: Array<{ kind: Kind; closedWith: number | null }> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++
      const kind = kinds[i % kinds.length] as Kind
      const { closedWith } = await probe(relay, token, frame(kind))
      results.push({ kind, closedWith })
      // Meanwhile the calm room keeps syncing.
      if (i % 100 === 0) a.doc.getArray('ticks').push([i])
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))

  expect(results).toHaveLength(total)
  for (const r of results) {
    if (r.kind === 'random-update') expect([CloseCode.malformedMessage, null]).toContain(r.closedWith)
    else expect(r, r.kind).toEqual({ kind: r.kind, closedWith: CloseCode.malformedMessage })
  }
  const closed = results.filter((r) => r.closedWith === CloseCode.malformedMessage).length
  expect(closed).toBeGreaterThan((total * 6) / 7 - 1)

  await waitFor(() => b.doc.getArray('ticks').length === 10, 5000, 'calm room to keep syncing')
  expect((await fetch(`${relay.httpUrl}/healthz`)).status).toBe(200)
  await waitFor(async () => (await scrape(relay)).get('engram_relay_connections_closed_total{reason="malformedMessage"}') === closed, 5000, 'close metrics')
  expect(relay.child.exitCode).toBeNull()
  expect(a.provider.wsconnected && b.provider.wsconnected).toBe(true)
}, 60_000)
