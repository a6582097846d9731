import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Tests run against the packages' source, imported by package name as an app would. */
export const engramAliases = [
  { find: /^@engram\/core$/, replacement: src('./packages/core/src/index.ts') },
  { find: /^@engram\/core\/pricing$/, replacement: src('./packages/core/src/pricing-entry.ts') },
  { find: /^@engram\/core\/internal$/, replacement: src('./packages/core/src/internal.ts') },
  { find: /^@engram\/sync$/, replacement: src('./packages/sync/src/index.ts') },
  { find: /^@engram\/sync\/status$/, replacement: src('./packages/sync/src/status-registry.ts') },
  { find: /^@engram\/sync\/close-codes$/, replacement: src('./packages/sync/src/close-codes.ts') },
  { find: /^@engram\/worker$/, replacement: src('./packages/worker/src/index.ts') },
  { find: /^@engram\/worker\/host$/, replacement: src('./packages/worker/src/host-entry.ts') },
  { find: /^@engram\/langgraph$/, replacement: src('./packages/langgraph/src/index.ts') },
  { find: /^@engram\/ai-sdk$/, replacement: src('./packages/ai-sdk/src/index.ts') },
  { find: /^@engram\/embed-local$/, replacement: src('./packages/embed-local/src/index.ts') },
  { find: /^@engram\/react$/, replacement: src('./packages/react/src/index.ts') },
  { find: /^@engram\/relay$/, replacement: src('./apps/relay/src/index.ts') },
]

export default defineConfig({
  resolve: { alias: engramAliases },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          environment: 'node',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/e2e/**', '**/node_modules/**'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The store's own tests again, on the global IndexedDB (nothing injected), as a browser app opens it.
        extends: true,
        test: {
          name: 'globals',
          environment: 'node',
          include: ['packages/core/src/**/*.test.ts'],
          setupFiles: ['./test/support/globals-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The store's own tests again, every store encrypted at rest (test/support/memory.ts): encryption must change nothing they see.
        extends: true,
        test: {
          name: 'encrypted',
          environment: 'node',
          include: ['packages/core/src/**/*.test.ts', 'packages/sync/src/**/*.test.ts', 'packages/worker/src/**/*.test.ts'],
          env: { ENGRAM_TEST_ENCRYPTION: '1' },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
