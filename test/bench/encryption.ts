/**
 * `npm run bench -- encryption`: facts.set, appendExchange, search and
 * context.build on a store encrypted at rest beside the same calls on a plain
 * store, in one run on fake-indexeddb (the goal counts in Chromium:
 * `npm run bench -- browser` with BROWSER_BENCH_SUITES=encryption). Here all
 * storage work is JavaScript in this thread, so the figure is CPU time per call
 * (process.cpuUsage): on a loaded machine wall time mostly measures waiting for a core.
 * Sizes: ENCRYPTION_BENCH_WRITES (default 500), ENCRYPTION_BENCH_CORPUS (default 5,000).
 */
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openMemory } from '@engram/core'
import { encryptionFigures } from '../e2e/pages/bench-encryption.js'
import { printTable } from './stats.js'

const writes = Number(process.env.ENCRYPTION_BENCH_WRITES ?? 500)
const corpus = Number(process.env.ENCRYPTION_BENCH_CORPUS ?? 5_000)
let stores = 0

export async function runEncryptionBench(): Promise<void> {
  const figures = await encryptionFigures(
    (key, internals) =>
      openMemory({
        appId: 'bench-enc',
        userId: `u${++stores}`,
        indexedDB: new IDBFactory(),
        IDBKeyRange,
        ...internals,
        ...(key ? { encryption: { key } } : {}),
      }),
    { writes, corpus, queries: 200 },
    (text) => console.error(`[bench] ${text}`),
    () => {
      const u = process.cpuUsage()
      return (u.user + u.system) / 1000
    },
  )
  printTable(
    `at-rest encryption on vs off, fake-indexeddb, CPU time per call (${corpus.toLocaleString('en')} messages for search and context; the goals count in Chromium: \`npm run bench -- browser\`)`,
    figures,
  )
}
