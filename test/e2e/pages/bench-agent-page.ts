// The agent-path benchmark's page: starts its worker when Node asks (after Node attached to the
// page's workers, so it can read the worker's heap) and relays Node's requests to it.
import type { AgentRequest } from './bench-agent-protocol.js'

let worker: Worker | undefined
let ids = 0
const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()

/** Starts the worker; resolves once it is ready. */
function start(): Promise<void> {
  worker = new Worker(new URL('./bench-agent.worker.ts', import.meta.url), { type: 'module' })
  return new Promise((resolve, reject) => {
    worker!.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { ready?: boolean; id?: number; result?: unknown; error?: string }
      if (data.ready) return resolve()
      const call = pending.get(data.id!)
      pending.delete(data.id!)
      if (data.error !== undefined) call?.reject(new Error(data.error))
      else call?.resolve(data.result)
    })
    worker!.addEventListener('error', (e) => reject(new Error(e.message)))
  })
}

/** Sends one request to the worker and resolves with its answer. */
function ask(request: AgentRequest): Promise<unknown> {
  const id = ++ids
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject })
    worker!.postMessage({ ...request, id })
  })
}

;(window as unknown as { bench: { start: typeof start; ask: typeof ask } }).bench = { start, ask }
document.title = 'ready'
