import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/** The Chromium the e2e tests drive: Debian's, or `ENGRAM_CHROMIUM`. */
export const chromiumPath = process.env.ENGRAM_CHROMIUM ?? '/usr/bin/chromium'

const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * Launches one browser profile (a "device"): a fresh user-data-dir, so its
 * IndexedDB is its own.
 *
 * @throws Error when Chromium is missing: the e2e tests fail, they do not skip.
 */
export async function launchProfile(dir: string, name: string): Promise<BrowserContext> {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium not found at ${chromiumPath}: apt-get install -y chromium, or set ENGRAM_CHROMIUM`)
  return await chromium.launchPersistentContext(join(dir, `profile-${name}`), {
    executablePath: chromiumPath,
    headless: true,
    args: flags,
    viewport: { width: 1280, height: 900 },
  })
}
