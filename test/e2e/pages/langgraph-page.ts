import type { GraphHarness, GraphRequest, GraphResponse, GraphView } from './langgraph-protocol.js'

// The graph runs in a dedicated worker; the page only sends requests and shows answers.
const worker = new Worker(new URL('./langgraph.worker.ts', import.meta.url), { type: 'module' })
const waiting = new Map<number, { resolve: (view: GraphView) => void; reject: (error: Error) => void }>()
let ids = 0

worker.addEventListener('message', (event: MessageEvent<GraphResponse>) => {
  const reply = event.data
  const pending = waiting.get(reply.id)
  waiting.delete(reply.id)
  if (reply.ok) pending?.resolve(reply.view)
  else pending?.reject(new Error(reply.error))
})

const harness: GraphHarness = {
  call(op: GraphRequest['op'], args: object): Promise<GraphView> {
    const id = ++ids
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject })
      worker.postMessage({ id, op, ...args })
    })
  },
}

window.graph = harness
document.title = 'ready'
