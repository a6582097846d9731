import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'

/** A background thread that keeps a WAL database's files small. */
export interface SqliteMaintenance {
  /** Stop the thread; resolves once it has exited. */
  stop(): Promise<void>
}

/** How often and how hard the maintenance thread works. */
export interface SqliteMaintenanceOptions {
  /** Milliseconds between rounds. */
  intervalMs: number
  /** Free pages above which a round returns space to the file system. */
  vacuumAbovePages: number
  /** Free pages returned per round at most (bounds the write lock it holds). */
  vacuumPagesPerRound: number
}

// Plain CommonJS, evaluated in the worker with its own connection. busy_timeout
// is 0: a round that meets a busy database gives up at once instead of making
// the relay's writer wait behind it.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file)
db.pragma('busy_timeout = 0')
const round = () => {
  try {
    // PASSIVE copies the log without blocking writers; TRUNCATE then has little
    // left to copy and resets the log file to zero bytes.
    db.pragma('wal_checkpoint(PASSIVE)')
    db.pragma('wal_checkpoint(TRUNCATE)')
  } catch {}
  try {
    const free = db.pragma('freelist_count', { simple: true })
    if (free > workerData.vacuumAbovePages) db.pragma('incremental_vacuum(' + workerData.vacuumPagesPerRound + ')')
  } catch {}
}
const timer = setInterval(round, workerData.intervalMs)
parentPort.on('message', () => { clearInterval(timer); db.close(); process.exit(0) })
`

/**
 * Maintain `file` from a worker thread: checkpoint its write-ahead log (PASSIVE
 * then TRUNCATE) and return free pages left by compactions to the file system
 * (`incremental_vacuum`). Off the main thread, none of it stalls the relay's
 * event loop; SQLite's automatic checkpoint would run inside whichever commit
 * crosses its threshold.
 */
export function startSqliteMaintenance(file: string, options: SqliteMaintenanceOptions): SqliteMaintenance {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(workerSource, { eval: true, workerData: { file, driver, ...options } })
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
