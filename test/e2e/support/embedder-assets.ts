import { cp, mkdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { MODEL_FILES, WEIGHTS_PACKAGE } from '@engram/embed-local'

const require = createRequire(import.meta.url)
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`))

/** Copies the shipped model and the TensorFlow.js WASM files into `root` (`/models/use-lite/`, `/tfjs/`), where an app's bundler would put them. */
export async function copyEmbedderAssets(root: string): Promise<void> {
  await mkdir(join(root, 'models/use-lite'), { recursive: true })
  await mkdir(join(root, 'tfjs'), { recursive: true })
  for (const f of MODEL_FILES) await cp(join(packageDir(WEIGHTS_PACKAGE), 'dist', f), join(root, 'models/use-lite', f))
  for (const f of ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'])
    await cp(join(packageDir('@tensorflow/tfjs-backend-wasm'), 'dist', f), join(root, 'tfjs', f))
}
