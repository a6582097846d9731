// Starts the knowledge benchmark in a dedicated worker and hands its result to Node.
import type { KnowledgeBenchConfig, KnowledgeFigure } from './bench-knowledge.worker.js'

/** Runs the knowledge benchmark with `config`. */
function run(config: KnowledgeBenchConfig): Promise<{ figures: KnowledgeFigure[]; notes: string[] }> {
  const worker = new Worker(new URL('./bench-knowledge.worker.ts', import.meta.url), { type: 'module' })
  return new Promise((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { type: string; text?: string; result?: { figures: KnowledgeFigure[]; notes: string[] }; message?: string }
      if (data.type === 'ready') worker.postMessage({ cmd: 'run', config })
      else if (data.type === 'progress') console.log(`[bench] ${data.text}`)
      else if (data.type === 'done') resolve(data.result!)
      else if (data.type === 'error') reject(new Error(data.message))
    })
    worker.addEventListener('error', (e) => reject(new Error(e.message)))
  })
}

;(window as unknown as { bench: { run: typeof run } }).bench = { run }
document.title = 'ready'
