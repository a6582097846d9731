import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'

let relay: RelayProcess
const clients: Client[] = []
const connect = (room: string, token: string): Client => {
  const c = connectClient(relay, room, token)
  clients.push(c)
  return c
}
beforeAll(async () => {
  relay = await startRelay({ args: ['--max-documents-per-user', '2', '--max-bytes-per-user', '50000'] })
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})

it("refuses a user's document past --max-documents-per-user with 4405 and bytes past --max-bytes-per-user with 4407", async () => {
  const token = await tokenFor('quota')
  const a = connect('quota/a', token)
  const b = connect('quota/b', token)
  await Promise.all([a.synced, b.synced])
  a.doc.getText('t').insert(0, 'a'.repeat(30_000))
  b.doc.getText('t').insert(0, 'b'.repeat(10_000))
  const watcher = connect('quota/b', token)
  await waitFor(() => watcher.doc.getText('t').length === 10_000, 5000, 'room b stored')

  // Two documents open: a third is refused before it is loaded.
  const c = connect('quota/c', token)
  expect(await c.firstClose).toBe(CloseCode.roomQuotaExceeded)
  c.destroy()
  // 40 kB stored: 15 kB more passes the user's 50 kB.
  b.doc.getText('t').insert(0, 'c'.repeat(15_000))
  expect(await b.firstClose).toBe(CloseCode.byteQuotaExceeded)
  // Another user is not affected.
  const other = connect('quota2/c', await tokenFor('quota2'))
  await other.synced

  const m = await scrape(relay)
  expect(m.get('engram_relay_connections_refused_total{reason="roomQuotaExceeded"}')).toBe(1)
  expect(m.get('engram_relay_connections_closed_total{reason="byteQuotaExceeded"}')).toBe(1)
  expect(m.get('engram_relay_user_documents_peak')).toBe(2)
  expect(m.get('engram_relay_user_documents_limit')).toBe(2)
  expect(m.get('engram_relay_user_rooms_peak')).toBe(2)
  expect(m.get('engram_relay_user_rooms_limit')).toBe(2)
  expect(m.get('engram_relay_user_bytes_peak')).toBeGreaterThan(40_000)
  expect(m.get('engram_relay_user_bytes_peak')).toBeLessThan(50_000)
  expect(m.get('engram_relay_user_bytes_limit')).toBe(50_000)
  expect(watcher.doc.getText('t').length).toBe(10_000)
})

it('frees a document slot when its last connection closes (documents open count, not rooms ever stored)', async () => {
  const token = await tokenFor('slots')
  const a = connect('slots/a', token)
  const b = connect('slots/b', token)
  await Promise.all([a.synced, b.synced])
  const open = (await scrape(relay)).get('engram_relay_connections') ?? 0
  a.destroy()
  // Once a's socket is gone its slot is free: a third room opens.
  await waitFor(async () => (await scrape(relay)).get('engram_relay_connections') === open - 1, 5000, 'socket of a closed')
  const c = connect('slots/c', token)
  await c.synced
})

it("reads a user's stored bytes back after a restart, and the deprecated --max-rooms-per-user still sets the document limit", async () => {
  const again = await startRelay({ data: relay.data, args: ['--max-rooms-per-user', '1', '--max-bytes-per-user', '50000'] })
  try {
    const token = await tokenFor('quota')
    const a = connectClient(again, 'quota/a', token)
    clients.push(a)
    await a.synced
    // 40 kB stored before the restart: 15 kB more passes the 50 kB.
    a.doc.getText('t').insert(0, 'd'.repeat(15_000))
    expect(await a.firstClose).toBe(CloseCode.byteQuotaExceeded)
    const one = connectClient(again, 'quota/b', token)
    clients.push(one)
    await one.synced
    // The one slot is taken: another document is refused.
    const two = connectClient(again, 'quota/c', token)
    clients.push(two)
    expect(await two.firstClose).toBe(CloseCode.roomQuotaExceeded)
    expect((await scrape(again)).get('engram_relay_user_documents_limit')).toBe(1)
  } finally {
    await again.stop()
  }
})
