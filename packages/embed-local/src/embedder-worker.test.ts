import { describe, expect, it } from 'vitest'
import { MessageChannel } from 'node:worker_threads'
import { serveEmbedder, workerEmbedder } from './embedder-worker.js'
import type { EmbedderEndpoint } from './embedder-worker.js'

/** A node MessagePort as the endpoint shape (on/postMessage with `{ data }` events). */
function endpoint(port: import('node:worker_threads').MessagePort): EmbedderEndpoint {
  return {
    postMessage: (m) => port.postMessage(m),
    addEventListener: (_type, listener) => port.on('message', (data) => listener({ data } as MessageEvent)),
  }
}

describe('an embedder behind a message port', () => {
  it('answers requests in order of their ids, passes failures back, and names the local model by default', async () => {
    const { port1, port2 } = new MessageChannel()
    serveEmbedder(
      {
        async embed(texts) {
          if (texts.includes('boom')) throw new Error('model offline')
          return texts.map((t) => Float32Array.from([t.length, 1]))
        },
      },
      endpoint(port1),
    )
    const remote = workerEmbedder(endpoint(port2), { dimensions: 2 })
    expect(remote.dimensions).toBe(2)
    expect(remote.model).toMatch(/universal-sentence-encoder/)
    const [a, b] = await Promise.all([remote.embed(['abc', 'de']), remote.embed(['f'])])
    expect(a.map((v) => [...v])).toEqual([
      [3, 1],
      [2, 1],
    ])
    expect(b.map((v) => [...v])).toEqual([[1, 1]])
    await expect(remote.embed(['boom'])).rejects.toThrow('model offline')
    port1.close()
    port2.close()
  })
})
