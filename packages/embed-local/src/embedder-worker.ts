/*
 * Running the model in a worker of its own. The model keeps a CPU busy for
 * tens to hundreds of milliseconds a batch; in the store's worker that time
 * is taken from every `facts.set` and search queued behind it. A worker for
 * the model leaves the store's thread free: `serveEmbedder` answers in the
 * model's worker, `workerEmbedder` is the embedder the store is given.
 */
import { LOCAL_DIMENSIONS, LOCAL_MODEL_ID } from './local-embedder.js'

/** What an embedder needs to serve requests on (a `Worker`'s global scope, a `MessagePort`). */
export interface EmbedderEndpoint {
  postMessage(message: unknown): void
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void
}

interface EmbedRequest {
  engramEmbed: number
  texts: string[]
}
interface EmbedReply {
  engramEmbed: number
  vectors?: Float32Array[]
  error?: string
}

/**
 * Answers embed requests arriving on `endpoint` (default: this worker's global
 * scope) with `embedder`. Call it in the model's worker.
 * @example
 * ```ts
 * // embed.worker.ts
 * import { localEmbedder, serveEmbedder } from '@engram/embed-local'
 * serveEmbedder(localEmbedder({ modelUrl: '/models/use-lite/', wasmPaths: '/tfjs/' }))
 * ```
 */
export function serveEmbedder(
  embedder: { embed(texts: string[]): Promise<Float32Array[]> },
  endpoint: EmbedderEndpoint = globalThis as unknown as EmbedderEndpoint,
): void {
  endpoint.addEventListener('message', (event: MessageEvent) => {
    const request = event.data as EmbedRequest
    if (typeof request?.engramEmbed !== 'number' || !Array.isArray(request.texts)) return
    embedder.embed(request.texts).then(
      (vectors) => endpoint.postMessage({ engramEmbed: request.engramEmbed, vectors } satisfies EmbedReply),
      (error: unknown) =>
        endpoint.postMessage({ engramEmbed: request.engramEmbed, error: error instanceof Error ? error.message : String(error) } satisfies EmbedReply),
    )
  })
}

/**
 * An embedder for `openMemory({ embedder })` whose model runs behind `endpoint`
 * (a `Worker` running {@link serveEmbedder}). `dimensions` and `model` default
 * to the local model's.
 * @example
 * ```ts
 * // memory.worker.ts (the store's worker)
 * import { workerEmbedder } from '@engram/embed-local'
 * const embedder = workerEmbedder(new Worker(new URL('./embed.worker.ts', import.meta.url), { type: 'module' }))
 * const memory = await openMemory({ appId, userId, embedder })
 * ```
 */
export function workerEmbedder(
  endpoint: EmbedderEndpoint,
  options: { dimensions?: number; model?: string } = {},
): {
  dimensions: number
  model: string
  embed(texts: string[]): Promise<Float32Array[]>
} {
  const waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>()
  let next = 0
  endpoint.addEventListener('message', (event: MessageEvent) => {
    const reply = event.data as EmbedReply
    const w = typeof reply?.engramEmbed === 'number' ? waiting.get(reply.engramEmbed) : undefined
    if (!w) return
    waiting.delete(reply.engramEmbed)
    if (reply.vectors) w.resolve(reply.vectors)
    else w.reject(new Error(reply.error ?? 'the embedder worker failed'))
  })
  return {
    dimensions: options.dimensions ?? LOCAL_DIMENSIONS,
    model: options.model ?? LOCAL_MODEL_ID,
    embed(texts) {
      const id = ++next
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        endpoint.postMessage({ engramEmbed: id, texts } satisfies EmbedRequest)
      })
    },
  }
}
