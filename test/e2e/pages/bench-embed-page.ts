// Starts one embedder benchmark in a dedicated worker and hands its result to Node.
import type { EmbedBenchCommand } from './bench-embed.worker.js'

function ask<T>(command: EmbedBenchCommand): Promise<T> {
  const worker = new Worker(new URL('./bench-embed.worker.ts', import.meta.url), { type: 'module' })
  return new Promise((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { type: string; result?: T; message?: string }
      if (data.type === 'ready') worker.postMessage(command)
      else if (data.type === 'done') {
        worker.terminate()
        resolve(data.result!)
      } else if (data.type === 'error') reject(new Error(data.message))
    })
    worker.addEventListener('error', (e) => reject(new Error(e.message)))
  })
}

;(window as unknown as { bench: { ask: typeof ask } }).bench = { ask }
document.title = 'ready'
