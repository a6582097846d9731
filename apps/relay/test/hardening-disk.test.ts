import { afterAll, beforeAll, expect, it } from 'vitest'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { connectClient, startRelay, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'

let relay: RelayProcess
const clients: Client[] = []
const size = (file: string): number => {
  try {
    return statSync(join(relay.data, file)).size
  } catch {
    return 0
  }
}
beforeAll(async () => {
  relay = await startRelay({ args: ['--wal-limit-bytes', '1048576', '--compact-after-updates', '4'] })
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})

it('keeps the write-ahead log bounded and returns compacted space to the disk while running', async () => {
  const token = await tokenFor('disk')
  const writer = connectClient(relay, 'disk/doc', token)
  const reader = connectClient(relay, 'disk/doc', token)
  clients.push(writer, reader)
  await Promise.all([writer.synced, reader.synced])
  const text = writer.doc.getText('t')
  // 40 rewrites of 200 kB: about 16 MB through the log (updates and compaction snapshots).
  let peakWal = 0
  for (let round = 0; round < 40; round++) {
    writer.doc.transact(() => {
      text.delete(0, text.length)
      text.insert(0, String.fromCharCode(97 + (round % 26)).repeat(200_000))
    })
    const expected = text.toString()
    await waitFor(() => reader.doc.getText('t').toString() === expected, 10_000, `round ${round} at the reader`)
    peakWal = Math.max(peakWal, size('relay.sqlite-wal'))
  }
  expect(peakWal).toBeGreaterThan(0)
  await waitFor(() => size('relay.sqlite-wal') <= 1024 * 1024, 10_000, 'the log to be cut back to --wal-limit-bytes')

  const grown = size('relay.sqlite')
  writer.doc.transact(() => {
    text.delete(0, text.length)
    text.insert(0, 'done')
  })
  await waitFor(() => reader.doc.getText('t').toString() === 'done', 10_000, 'the last round at the reader')
  // Nothing left but a few bytes: the file shrinks while the relay runs, not at shutdown.
  writer.provider.disconnect()
  reader.provider.disconnect()
  await waitFor(() => size('relay.sqlite') < Math.min(grown, 1024 * 1024), 15_000, 'freed pages to be returned to the disk')
  expect(relay.child.exitCode).toBeNull()
}, 90_000)
