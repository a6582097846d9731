// The shipped embedder as an app runs it: the store in this dedicated worker, the model in a worker
// of its own, its files from the page's assets; real IndexedDB. test/e2e/embedder.test.ts drives it.
import { type Memory, openMemory } from '@engram/core'
import { workerEmbedder } from '@engram/embed-local'
import { counting } from './counting-embedder.js'

/** What the test asks for. */
export type EmbedderCommand =
  /** Opens a new store, writes `turns` into one session, waits for their vectors, and searches `queries`. */
  | { cmd: 'remember'; userId: string; turns: string[]; queries: string[] }
  /** Opens the store again (optionally under another model id) and searches `query` by vector. */
  | { cmd: 'reopen'; userId: string; query: string; model?: string; expectEmbedded?: number }

/** The texts of the top hits of one query, per mode. */
export interface Ranked {
  query: string
  text: string[]
  hybrid: string[]
}

const modelWorker = () => new Worker(new URL('./bench-embed-model.worker.ts', import.meta.url), { type: 'module' })
const open = (userId: string, model?: string) => {
  const embedder = counting(workerEmbedder(modelWorker(), model === undefined ? {} : { model }))
  return { embedder, memory: openMemory({ appId: 'embedder-e2e', userId, embedder }) }
}
const top = async (memory: Memory, query: string, mode: 'text' | 'hybrid' | 'vector') =>
  (await memory.search('p', query, { mode, limit: 5 })).map((h) => h.text)

async function run(c: EmbedderCommand): Promise<unknown> {
  const { embedder, memory: opening } = open(c.userId, c.cmd === 'reopen' ? c.model : undefined)
  const memory = await opening
  try {
    if (c.cmd === 'remember') {
      await memory.projects.create({ name: 'P', id: 'p' })
      const session = await memory.sessions.create('p')
      await memory.messages.appendMany(
        session.id,
        c.turns.map((content, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content })),
      )
      await embedder.until(c.turns.length)
      const ranked: Ranked[] = []
      for (const query of c.queries) ranked.push({ query, text: await top(memory, query, 'text'), hybrid: await top(memory, query, 'hybrid') })
      return { ranked, embedder: (await memory.status.get()).embedder.state }
    }
    // A model change re-embeds every message before its vectors answer; the same model embeds only the query.
    if (c.expectEmbedded !== undefined) await embedder.until(c.expectEmbedded)
    const vector = await top(memory, c.query, 'vector')
    return { vector, embedded: embedder.texts }
  } finally {
    await memory.close()
  }
}

self.addEventListener('message', (event: MessageEvent<EmbedderCommand>) => {
  run(event.data).then(
    (result) => self.postMessage({ type: 'done', result }),
    (error: unknown) => self.postMessage({ type: 'error', message: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) }),
  )
})
self.postMessage({ type: 'ready' })
