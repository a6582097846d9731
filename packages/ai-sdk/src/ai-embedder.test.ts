import { MockEmbeddingModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { aiEmbedder } from './ai-embedder.js'

/** A 3-dimensional mock embedding: letters a, e, o counted. */
const vector = (text: string) => [...'aeo'].map((c) => text.split(c).length - 1)

describe('aiEmbedder', () => {
  it('embeds through embedMany in batches of the provider limit, one vector per text in order', async () => {
    const model = new MockEmbeddingModelV3({
      maxEmbeddingsPerCall: 2,
      doEmbed: async ({ values }) => ({ embeddings: values.map(vector), warnings: [] }),
    })
    const embedder = aiEmbedder(model, { dimensions: 3 })
    const vectors = await embedder.embed(['banana', 'tree', 'foo', 'ale', 'eee'])
    expect(vectors.map((v) => [...v])).toEqual([vector('banana'), vector('tree'), vector('foo'), vector('ale'), vector('eee')])
    expect(model.doEmbedCalls.map((c) => c.values.length)).toEqual([2, 2, 1])
  })

  it('refuses a model whose vectors have another length (a model change needs re-embedding)', async () => {
    const model = new MockEmbeddingModelV3({ doEmbed: async ({ values }) => ({ embeddings: values.map(() => [1, 2]), warnings: [] }) })
    await expect(aiEmbedder(model, { dimensions: 3 }).embed(['x'])).rejects.toMatchObject({ code: 'conflict' })
    expect(() => aiEmbedder(model, { dimensions: 0 })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })

  it('close() cancels a call in flight and refuses later ones', async () => {
    let seen: AbortSignal | undefined
    const model = new MockEmbeddingModelV3({
      doEmbed: ({ abortSignal }) => {
        seen = abortSignal
        return new Promise((_, reject) => abortSignal?.addEventListener('abort', () => reject(abortSignal.reason)))
      },
    })
    const embedder = aiEmbedder(model, { dimensions: 3, maxRetries: 0 })
    const call = embedder.embed(['x'])
    await expect.poll(() => seen).toBeDefined()
    embedder.close()
    await expect(call).rejects.toBeDefined()
    await expect(embedder.embed(['y'])).rejects.toMatchObject({ code: 'closed' })
  })
})
