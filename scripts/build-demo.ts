import { fileURLToPath } from 'node:url'
import { build } from 'vite'

const demoConfig = fileURLToPath(new URL('../apps/demo/vite.config.ts', import.meta.url))

/**
 * Builds apps/demo with Vite's JS API into `outDir` (default `apps/demo/dist`).
 *
 * @returns the folder holding index.html and the assets.
 * @throws the bundler's error when the build fails.
 */
export async function buildDemo(options: { outDir?: string; quiet?: boolean } = {}): Promise<string> {
  const outDir = options.outDir ?? fileURLToPath(new URL('../apps/demo/dist', import.meta.url))
  await build({
    configFile: demoConfig,
    logLevel: options.quiet === true ? 'error' : 'warn',
    build: { outDir, emptyOutDir: true },
  })
  return outDir
}
