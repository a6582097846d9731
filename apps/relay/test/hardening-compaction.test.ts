import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { CloseCode } from '@engram/sync/close-codes'

let relay: RelayProcess
const clients: Client[] = []
beforeAll(async () => {
  relay = await startRelay({
    args: ['--max-document-bytes', '300000', '--compact-after-updates', '100000', '--messages-per-second', '10000', '--message-burst', '10000'],
  })
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})

it('a document at its cap refuses tiny updates without compacting for each one', async () => {
  const token = await tokenFor('cap')
  const writer = connectClient(relay, 'cap/doc', token)
  const reader = connectClient(relay, 'cap/doc', token)
  clients.push(writer, reader)
  await Promise.all([writer.synced, reader.synced])
  const text = writer.doc.getText('t')
  for (let i = 0; i < 29; i++) text.insert(text.length, String(i % 10).repeat(10_000))
  await waitFor(() => reader.doc.getText('t').length === 290_000, 10_000, 'the document to fill up')
  const before = await scrape(relay)
  const cpuBefore = before.get('process_cpu_seconds_total') as number

  // 800 one-character updates: the first few fit, the rest meet the cap.
  for (let i = 0; i < 800; i++) text.insert(text.length, 'x')
  expect(await writer.firstClose).toBe(CloseCode.documentTooLarge)

  const after = await scrape(relay)
  const compactions = (after.get('engram_relay_compactions_total') as number) - (before.get('engram_relay_compactions_total') as number)
  expect(compactions).toBeLessThanOrEqual(2)
  expect((after.get('process_cpu_seconds_total') as number) - cpuBefore).toBeLessThan(2)
  expect(after.get('nodejs_eventloop_delay_seconds{quantile="1"}')).toBeLessThan(1)
  // The reader kept what was stored, and nothing past the cap.
  const stored = reader.doc.getText('t').length
  expect(stored).toBeGreaterThanOrEqual(290_000)
  expect(stored).toBeLessThan(290_800)
}, 60_000)
