/*
 * TensorFlow.js, loaded on first use: the core, the graph-model converter and
 * one backend (WASM by default, with the CPU kernels it falls back on). The
 * WASM binaries ship in `@tensorflow/tfjs-backend-wasm`; in Node they are read
 * from its directory, in a page or a worker from the URL the app gives.
 */
import { inNode, packageDir } from './model-files.js'

/** A TensorFlow.js backend the embedder can run on. */
export type Backend = 'wasm' | 'cpu'

/** The parts of TensorFlow.js the embedder uses. */
export interface Runtime {
  tf: typeof import('@tensorflow/tfjs-core')
  converter: typeof import('@tensorflow/tfjs-converter')
  /** The backend in use. */
  backend: Backend
}

let loading: Promise<Runtime> | undefined
let loadedBackend: Backend | undefined

/**
 * Loads TensorFlow.js with `backend` (once per realm: TensorFlow.js keeps one engine).
 * `wasmPaths`: where the `.wasm` files are (a URL prefix ending in `/`), for pages and workers;
 * `threads`: how many threads the WASM backend may use (where the page is cross-origin isolated).
 */
export function loadRuntime(backend: Backend, wasmPaths: string | undefined, threads?: number): Promise<Runtime> {
  if (loading && loadedBackend !== backend) loading = undefined
  loadedBackend = backend
  loading ??= (async () => {
    const [tf, converter] = await Promise.all([import('@tensorflow/tfjs-core'), import('@tensorflow/tfjs-converter')])
    await import('@tensorflow/tfjs-backend-cpu')
    if (backend === 'wasm') {
      const wasm = await import('@tensorflow/tfjs-backend-wasm')
      const prefix = wasmPaths ?? (inNode() ? `${await packageDir('@tensorflow/tfjs-backend-wasm')}/dist/` : undefined)
      if (prefix !== undefined) wasm.setWasmPaths(prefix)
      // Threads are used only where the page is cross-origin isolated; by default one per core.
      if (threads !== undefined) wasm.setThreadsCount(threads)
    }
    if (!(await tf.setBackend(backend))) throw new Error(`TensorFlow.js could not start its ${backend} backend`)
    await tf.ready()
    return { tf, converter, backend }
  })()
  const started = loading
  started.catch(() => {
    if (loading === started) loading = undefined
  })
  return started
}
