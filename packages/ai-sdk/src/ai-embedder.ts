import { type EmbeddingModel, embedMany } from 'ai'
import { type Embedder, MemoryError } from '@engram/core'

/** Options of {@link aiEmbedder}. */
export interface AiEmbedderOptions {
  /** The length of the model's vectors (e.g. 1536 for `text-embedding-3-small`); checked on the first call. */
  dimensions: number
  /** Retries of one batch (default 2, the AI SDK's own backoff). */
  maxRetries?: number
  /** Batches sent at once (default 1: one after the other). */
  maxParallelCalls?: number
}

/** An {@link Embedder} made of an AI SDK embedding model, with `close()` to cancel its calls in flight. */
export interface AiEmbedder extends Embedder {
  /** Cancels the calls in flight; later calls fail with `closed`. */
  close(): void
}

/**
 * Any AI SDK embedding model as Engram's embedder: `embedMany` in batches of the provider's
 * limit (`maxEmbeddingsPerCall`), with retries. The first answer's vectors must have
 * `dimensions` entries: a model that answers another length is refused (`conflict`), because
 * vectors already stored came from another model and need re-embedding first.
 *
 * @example
 * const memory = await openMemory({ appId, userId, embedder: aiEmbedder(openai.embedding('text-embedding-3-small'), { dimensions: 1536 }) })
 * @throws MemoryError `invalid_input` for a missing model or bad options.
 */
export function aiEmbedder(model: EmbeddingModel, options: AiEmbedderOptions): AiEmbedder {
  if (model === undefined || model === null) throw new MemoryError('invalid_input', 'aiEmbedder needs an AI SDK embedding model')
  if (typeof options !== 'object' || options === null || !Number.isInteger(options.dimensions) || options.dimensions < 1)
    throw new MemoryError('invalid_input', 'aiEmbedder needs options { dimensions: integer > 0 }')
  const { dimensions, maxRetries = 2, maxParallelCalls = 1 } = options
  const controller = new AbortController()
  let checked = false
  return {
    dimensions,
    async embed(texts) {
      if (controller.signal.aborted) throw new MemoryError('closed', 'This embedder was closed')
      if (texts.length === 0) return []
      const { embeddings } = await embedMany({ model, values: texts, maxRetries, maxParallelCalls, abortSignal: controller.signal })
      const wrong = embeddings.find((e) => e.length !== dimensions)
      if (wrong !== undefined) {
        throw new MemoryError(
          'conflict',
          `The embedding model answered vectors of ${wrong.length} dimensions, not ${dimensions}${checked ? '' : ' (first call)'}: a model change needs the stored vectors embedded again with it`,
        )
      }
      checked = true
      return embeddings.map((e) => Float32Array.from(e))
    },
    close() {
      controller.abort()
    },
  }
}
