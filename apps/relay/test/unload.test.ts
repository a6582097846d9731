import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectClient, scrape, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'

let relay: RelayProcess
let peakHeap = 0
// Each stock provider adds a process 'exit' listener.
process.setMaxListeners(0)
beforeAll(async () => {
  relay = await startRelay({ nodeArgs: ['--expose-gc'] })
})
afterAll(async () => {
  await relay.stop()
})

const heap = async (): Promise<number> => (await scrape(relay, true)).get('nodejs_heap_used_bytes') as number
const loaded = async (): Promise<number> => (await scrape(relay)).get('engram_relay_documents_loaded') as number

/** Open `count` documents in batches, fill each with ~`size` bytes, then close every client. */
async function openAndClose(prefix: string, count: number, size: number): Promise<number> {
  const token = await tokenFor('ivy')
  let peak = 0
  for (let start = 0; start < count; start += 50) {
    const batch: Client[] = []
    for (let i = start; i < Math.min(count, start + 50); i++) batch.push(connectClient(relay, `ivy/${prefix}-${i}`, token))
    await Promise.all(
      batch.map(async (c) => {
        await c.synced
      }),
    )
    const bytesIn = (await scrape(relay)).get('engram_relay_bytes_in_total') as number
    for (const c of batch) c.doc.getText('t').insert(0, 'x'.repeat(size))
    // Every document really holds its text before its client leaves.
    await waitFor(
      async () => ((await scrape(relay)).get('engram_relay_bytes_in_total') as number) >= bytesIn + batch.length * size,
      10_000,
      'updates to arrive',
    )
    peak = Math.max(peak, await loaded())
    peakHeap = Math.max(peakHeap, await heap())
    for (const c of batch) c.destroy()
  }
  return peak
}

it('unloads 200 closed documents and returns the heap near its baseline', async () => {
  await openAndClose('warmup', 20, 1000)
  await waitFor(async () => (await loaded()) === 0, 10_000, 'warm-up documents to unload')
  const baseline = await heap()

  const size = 50_000
  const peak = await openAndClose('doc', 200, size)
  expect(peak).toBeGreaterThanOrEqual(50)
  expect(peakHeap - baseline).toBeGreaterThan(2_000_000)
  await waitFor(async () => (await loaded()) === 0, 15_000, 'all documents to unload')
  const m = await scrape(relay)
  expect(m.get('engram_relay_documents_unloaded_total')).toBe(220)
  expect(m.get('engram_relay_connections')).toBe(0)

  const after = await heap()
  console.log(
    `heap baseline ${(baseline / 1e6).toFixed(1)} MB, peak ${(peakHeap / 1e6).toFixed(1)} MB, after unloading 200 docs ${(after / 1e6).toFixed(1)} MB (200 × ${size / 1000} kB were loaded)`,
  )
  // 200 documents held ~10 MB of text; what stays must be a small fraction of that.
  expect(after - baseline).toBeLessThan(2_000_000)
}, 60_000)
