import { afterEach, expect, it } from 'vitest'
import { openSync, readFileSync, writeSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { connectClient, scrape, startRelay, tempDataDir, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'

const clients: Client[] = []
const relays: RelayProcess[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy()
  for (const r of relays.splice(0)) await r.stop()
})
const start = async (data: string, args: string[] = []): Promise<RelayProcess> => {
  const r = await startRelay({ data, args })
  relays.push(r)
  return r
}
const connect = (relay: RelayProcess, room: string, token: string): Client => {
  const c = connectClient(relay, room, token)
  clients.push(c)
  return c
}
const marker = 'DAMAGE-MARKER-0123456789-ABCDEFGHIJ'

/** A stopped relay's data with two rooms; then the overflow page holding the marker gets a bad next-page pointer. */
async function damagedData(): Promise<string> {
  const data = tempDataDir('damaged')
  const token = await tokenFor('dmg')
  const relay = await startRelay({ data })
  const bad = connectClient(relay, 'dmg/bad', token)
  const good = connectClient(relay, 'dmg/good', token)
  await Promise.all([bad.synced, good.synced])
  bad.doc.getText('t').insert(0, 'a'.repeat(60_000) + marker + 'b'.repeat(60_000))
  good.doc.getText('t').insert(0, 'fine')
  const check = connectClient(relay, 'dmg/bad', token)
  await waitFor(() => check.doc.getText('t').length > 120_000, 10_000, 'the large room stored')
  for (const c of [bad, good, check]) c.destroy()
  expect(await relay.stop()).toBe(0) // checkpointed into relay.sqlite
  const file = join(data, 'relay.sqlite')
  const at = readFileSync(file).indexOf(marker)
  expect(at).toBeGreaterThan(0)
  const page = Math.floor(at / 4096) * 4096
  const fd = openSync(file, 'r+')
  writeSync(fd, Buffer.from([0xff, 0xff, 0xff, 0x7f]), 0, 4, page)
  closeSync(fd)
  return data
}

it('refuses a damaged room with 4410, reports it, and keeps serving the other rooms', async () => {
  const data = await damagedData()
  const relay = await start(data)
  const token = await tokenFor('dmg')
  const bad = connect(relay, 'dmg/bad', token)
  expect(await bad.firstClose).toBe(CloseCode.roomDamaged)
  // 44xx: the stock client stops retrying.
  expect(bad.provider.shouldConnect).toBe(false)
  const good = connect(relay, 'dmg/good', token)
  await good.synced
  await waitFor(() => good.doc.getText('t').toString() === 'fine', 5000, 'the healthy room')
  const m = await scrape(relay)
  expect(m.get('engram_relay_rooms_damaged')).toBe(1)
  expect(m.get('engram_relay_connections_refused_total{reason="roomDamaged"}')).toBe(1)
  expect(relay.output.some((l) => l.includes('room damaged') && l.includes('dmg/bad'))).toBe(true)
  // Refused again without touching the store.
  expect(await connect(relay, 'dmg/bad', token).firstClose).toBe(CloseCode.roomDamaged)
}, 60_000)

it('finds damaged rooms at startup with --integrity-check', async () => {
  const data = await damagedData()
  const relay = await start(data, ['--integrity-check'])
  expect((await scrape(relay)).get('engram_relay_rooms_damaged')).toBe(1)
  expect(relay.output.some((l) => l.includes('"msg":"integrity check done"') && l.includes('"damagedRooms":1'))).toBe(true)
}, 60_000)
