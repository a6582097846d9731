// MiniSearch for the browser benchmark, in a worker of its own: at 100,000 messages its index is
// millions of small objects, whose garbage collection would otherwise pause the store measured
// beside it (and the store's heap would pause MiniSearch). Each search is timed here.
import MiniSearch from 'minisearch'

/** What the benchmark worker sends. */
export type MiniRequest = { cmd: 'build'; texts: string[] } | { cmd: 'search'; query: string }

let mini: MiniSearch<{ id: number; content: string }> | undefined

self.addEventListener('message', (event: MessageEvent<MiniRequest>) => {
  const data = event.data
  if (data.cmd === 'build') {
    mini = new MiniSearch<{ id: number; content: string }>({ fields: ['content'], idField: 'id' })
    mini.addAll(data.texts.map((content, id) => ({ id, content })))
    self.postMessage({ ms: 0 })
    return
  }
  const t0 = performance.now()
  mini!.search(data.query).slice(0, 10)
  self.postMessage({ ms: performance.now() - t0 })
})
