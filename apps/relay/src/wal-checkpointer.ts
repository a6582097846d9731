import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'

/** A background thread that checkpoints a WAL database. */
export interface WalCheckpointer {
  /** Stop the thread; resolves once it has exited. */
  stop(): Promise<void>
}

// Plain CommonJS, evaluated in the worker: its own connection, passive checkpoints on a timer.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file)
db.pragma('busy_timeout = 1000')
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)') } catch {}
}, workerData.intervalMs)
parentPort.on('message', () => { clearInterval(timer); db.close(); process.exit(0) })
`

/**
 * Checkpoint `file`'s write-ahead log every `intervalMs` from a worker thread.
 * Checkpoints copy the WAL into the database and fsync; off the main thread
 * they never stall the relay's event loop (SQLite's automatic checkpoint runs
 * inside whichever commit crosses the threshold, for milliseconds).
 */
export function startWalCheckpointer(file: string, intervalMs = 1000): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(workerSource, { eval: true, workerData: { file, driver, intervalMs } })
  worker.unref()
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      resolve()
    })
  })
  return {
    async stop() {
      // Keep the process alive until the worker has closed its connection.
      worker.ref()
      worker.postMessage('stop')
      await exited
    },
  }
}
