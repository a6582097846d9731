// Starts the browser benchmarks in a dedicated worker and hands their result to Node.
import type { BrowserBenchConfig, BrowserBenchResult, ImportVariant, StorageVariant } from './bench-browser.worker.js'
import type { EncryptionBenchConfig, EncryptionFigure } from './bench-encryption.js'

function ask<T>(message: Record<string, unknown>): Promise<T> {
  const worker = new Worker(new URL('./bench-browser.worker.ts', import.meta.url), { type: 'module' })
  return new Promise((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { type: string; text?: string; result?: T; message?: string }
      if (data.type === 'ready') worker.postMessage(message)
      else if (data.type === 'progress') console.log(`[bench] ${data.text}`)
      else if (data.type === 'done') resolve(data.result!)
      else if (data.type === 'error') reject(new Error(data.message))
    })
    worker.addEventListener('error', (e) => reject(new Error(e.message)))
  })
}

/** Runs the write and search suites. */
const run = (config: BrowserBenchConfig) => ask<BrowserBenchResult>({ cmd: 'run', config })
/** Writes one storage variant in this origin and returns the origin's usage (bytes). */
const storage = (variant: StorageVariant, n: number) => ask<number>({ cmd: 'storage', variant, n })

/** Imports `n` messages in this origin as one variant and returns the time it took (ms). */
const importRun = (importVariant: ImportVariant, n: number) => ask<number>({ cmd: 'import', importVariant, n })

/** Encrypted beside plain stores (bench-encryption.ts). */
const encryption = (config: EncryptionBenchConfig) => ask<EncryptionFigure[]>({ cmd: 'encryption', encryption: config })

;(window as unknown as { bench: { run: typeof run; storage: typeof storage; importRun: typeof importRun; encryption: typeof encryption } }).bench = {
  run,
  storage,
  importRun,
  encryption,
}
document.title = 'ready'
