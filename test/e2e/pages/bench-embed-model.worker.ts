// The model's own worker for the embedder benchmark: answers the store's worker's embed requests.
import { localEmbedder, serveEmbedder } from '@engram/embed-local'

// One WASM thread: the store's worker and IndexedDB keep the other core.
serveEmbedder(localEmbedder({ modelUrl: '/models/use-lite/', wasmPaths: '/tfjs/', threads: 1 }))
