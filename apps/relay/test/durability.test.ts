import { afterEach, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { connectClient, scrape, startRelay, tempDataDir, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'

const clients: Client[] = []
const relays: RelayProcess[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy()
  for (const r of relays.splice(0)) await r.stop('SIGKILL')
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
const storedRows = (data: string, room: string): number => {
  const db = new Database(join(data, 'relay.sqlite'), { readonly: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM updates WHERE room = ?').get(room) as { n: number }).n
  } finally {
    db.close()
  }
}

it('loses no update a client has seen when the relay is killed with SIGKILL', async () => {
  const data = tempDataDir('kill')
  const token = await tokenFor('gina')
  const first = await start(data, ['--compact-after-updates', '50'])
  const writer = connect(first, 'gina/journal', token)
  const reader = connect(first, 'gina/journal', token)
  await Promise.all([writer.synced, reader.synced])
  const n = 300
  for (let i = 0; i < n; i++) {
    writer.doc.getArray<number>('entries').push([i])
    if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await waitFor(() => reader.doc.getArray('entries').length === n, 10_000, 'reader to see every update')
  await waitFor(async () => ((await scrape(first)).get('engram_relay_compactions_total') ?? 0) >= 1, 10_000, 'a compaction while writing')

  expect(await first.stop('SIGKILL')).toBe('SIGKILL')
  writer.provider.disconnect()
  reader.provider.disconnect()

  const second = await start(data)
  const fresh = connect(second, 'gina/journal', token)
  await fresh.synced
  expect(fresh.doc.getArray<number>('entries').toArray()).toEqual(Array.from({ length: n }, (_, i) => i))
  // Compaction ran while writing (within its CPU budget): fewer rows than updates.
  expect(storedRows(data, 'gina/journal')).toBeLessThan(n)
}, 30_000)

it('shuts down gracefully on SIGTERM: "going away", flushed, restartable', async () => {
  const data = tempDataDir('term')
  const token = await tokenFor('hank')
  const relay = await start(data)
  const a = connect(relay, 'hank/p', token)
  await a.synced
  for (let i = 0; i < 20; i++) a.doc.getMap('m').set('k' + i, i)
  const b = connect(relay, 'hank/p', token)
  await b.synced
  await waitFor(() => b.doc.getMap('m').size === 20, 5000, 'sync before shutdown')

  const closeCode = a.firstClose
  expect(await relay.stop('SIGTERM')).toBe(0)
  expect(await closeCode).toBe(CloseCode.goingAway)
  // Going away is transient for the stock client: it keeps trying to reconnect.
  expect(a.provider.shouldConnect).toBe(true)
  expect(relay.output.some((l) => l.includes('"msg":"relay closed"'))).toBe(true)
  expect(storedRows(data, 'hank/p')).toBe(1)

  a.provider.disconnect()
  b.provider.disconnect()
  const again = await start(data)
  const c = connect(again, 'hank/p', token)
  await c.synced
  expect(c.doc.getMap('m').size).toBe(20)
}, 30_000)
