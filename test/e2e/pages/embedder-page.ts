// Runs one command of the shipped embedder's test in a store's dedicated worker and hands its result to Node.
import type { EmbedderCommand } from './embedder.worker.js'

function run<T>(command: EmbedderCommand): Promise<T> {
  const worker = new Worker(new URL('./embedder.worker.ts', import.meta.url), { type: 'module' })
  return new Promise<T>((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { type: string; result?: T; message?: string }
      if (data.type === 'ready') worker.postMessage(command)
      else if (data.type === 'done') resolve(data.result!)
      else if (data.type === 'error') reject(new Error(data.message))
    })
    worker.addEventListener('error', (e) => reject(new Error(e.message)))
  }).finally(() => worker.terminate())
}

declare global {
  interface Window {
    embedder: { run: typeof run }
  }
}
window.embedder = { run }
document.title = 'ready'
