import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'

let relay: RelayProcess
const clients: Client[] = []
process.setMaxListeners(0)
beforeAll(async () => {
  relay = await startRelay({
    args: ['--messages-per-second', '20', '--message-burst', '40', '--max-connections-per-user', '3', '--max-document-bytes', '20000'],
  })
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})

const rawSocket = async (path: string): Promise<{ ws: WebSocket; closed: Promise<number> }> => {
  const ws = new WebSocket(`${relay.wsUrl}/${path}`)
  const closed = new Promise<number>((resolve) =>
    ws.once('close', (code) => {
      resolve(code)
    }),
  )
  await new Promise((resolve, reject) => {
    ws.once('message', resolve)
    ws.once('error', reject)
  })
  return { ws, closed }
}

it('closes a connection that exceeds its message rate with 4529, without touching the document', async () => {
  const token = await tokenFor('jack')
  const { ws, closed } = await rawSocket(`jack/rate?token=${token}`)
  for (let i = 0; i < 100; i++) ws.send(Uint8Array.from([3])) // query awareness: cheap and valid
  expect(await closed).toBe(CloseCode.rateLimited)
})

it('refuses a user past maxConnectionsPerUser with 4530 while the others stay open', async () => {
  const token = await tokenFor('kate')
  for (let i = 0; i < 3; i++) clients.push(connectClient(relay, `kate/p${i}`, token))
  await Promise.all(
    clients.map(async (c) => {
      await c.synced
    }),
  )
  const before = await scrape(relay)
  const extra = connectClient(relay, 'kate/p9', token)
  clients.push(extra)
  expect(await extra.firstClose).toBe(CloseCode.tooManyConnections)
  const after = await scrape(relay)
  expect(after.get('engram_relay_documents_loaded_total')).toBe(before.get('engram_relay_documents_loaded_total'))
  expect(clients.slice(0, 3).every((c) => c.provider.wsconnected)).toBe(true)
  // Another user is not affected by kate's cap.
  const other = connectClient(relay, 'liam/p', await tokenFor('liam'))
  clients.push(other)
  await other.synced
})

it('refuses updates that would grow a document past maxDocumentBytes with 4413', async () => {
  const token = await tokenFor('mia')
  const a = connectClient(relay, 'mia/big', token)
  clients.push(a)
  await a.synced
  a.doc.getText('t').insert(0, 'y'.repeat(5000))
  const b = connectClient(relay, 'mia/big', token)
  clients.push(b)
  await b.synced
  await waitFor(() => b.doc.getText('t').length === 5000, 5000, 'first update')
  a.doc.getText('t').insert(0, 'z'.repeat(30_000))
  expect(await a.firstClose).toBe(CloseCode.documentTooLarge)
  // Proven by a later marker, not a sleep: the refused update never reached b.
  b.doc.getMap('m').set('marker', 1)
  const c = connectClient(relay, 'mia/big', token)
  clients.push(c)
  await c.synced
  await waitFor(() => c.doc.getMap('m').has('marker'), 5000, 'the marker')
  expect(b.doc.getText('t').length).toBe(5000)
  expect(c.doc.getText('t').length).toBe(5000)
})

describe('connection caps', () => {
  it('refuses connection attempts past the per-address burst with 4529, and past --max-connections with 4503', async () => {
    const capped = await startRelay({ args: ['--upgrade-burst', '4', '--upgrades-per-second', '0.01', '--max-connections', '2'] })
    try {
      const token = await tokenFor('nina')
      const open: Client[] = []
      const attempt = (room: string): Client => {
        const c = connectClient(capped, room, token)
        open.push(c)
        return c
      }
      const a = attempt('nina/a')
      const b = attempt('nina/b')
      await Promise.all([a.synced, b.synced])
      const third = attempt('nina/c')
      expect(await third.firstClose).toBe(CloseCode.unavailable)
      third.destroy()
      const fourth = attempt('nina/d')
      expect(await fourth.firstClose).toBe(CloseCode.unavailable)
      fourth.destroy()
      // The burst of 4 attempts is spent: the 5th is refused before auth.
      const fifth = attempt('nina/e')
      expect(await fifth.firstClose).toBe(CloseCode.rateLimited)
      fifth.destroy()
      const m = await scrape(capped)
      expect(m.get('engram_relay_connections_refused_total{reason="unavailable"}')).toBe(2)
      expect(m.get('engram_relay_connections_refused_total{reason="rateLimited"}')).toBe(1)
      expect(m.get('engram_relay_documents_loaded_total')).toBe(2)
      for (const c of open) c.destroy()
    } finally {
      await capped.stop()
    }
  })
})
