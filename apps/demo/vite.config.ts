import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import { engramAliases } from '../../vitest.config.js'

/** The demo builds against the packages' TypeScript sources, as the tests do. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  resolve: {
    alias: engramAliases,
  },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 1024 },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
})
