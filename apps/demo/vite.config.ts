import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url))

/** The demo builds against the packages' TypeScript sources, as the tests do. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  resolve: {
    alias: [
      { find: /^@engram\/core$/, replacement: repo('packages/core/src/index.ts') },
      { find: /^@engram\/sync$/, replacement: repo('packages/sync/src/index.ts') },
      { find: /^@engram\/worker$/, replacement: repo('packages/worker/src/index.ts') },
      { find: /^@engram\/worker\/host$/, replacement: repo('packages/worker/src/host-entry.ts') },
    ],
  },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 1024 },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
})
